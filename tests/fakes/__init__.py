"""Test doubles for what cannot run here (the Qualcomm QNN SDK)."""
