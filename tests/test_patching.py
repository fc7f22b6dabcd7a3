"""The one patching primitive (torch_export_names._patching) the hook, the audit and the
ExecuTorch adapter share: identity restore, and wrappers stacked in either order."""

import functools
import threading
import warnings

import pytest

from torch_export_names._patching import Patch, PatchSet, original_of


class Target:
    def method(self):
        return ["target"]


ORIGINAL = Target.__dict__["method"]


def ours(tag: str):
    """A patch that appends ``tag`` to the result while it is live, else only calls through."""

    def make(patch: Patch):
        original = patch.original

        @functools.wraps(original)
        def method(self):
            out = original(self)
            return out + [tag] if patch.installs(method) else out

        return method

    return Patch(Target, "method", make)


class Foreign:
    """Another tool's wrapper, the usual way: remember what was there, put it back on removal."""

    def __init__(self, tag: str):
        self.tag, self.saved = tag, None

    def install(self):
        self.saved = inner = Target.__dict__["method"]
        tag = self.tag
        Target.method = lambda obj: inner(obj) + [tag]

    def uninstall(self):
        Target.method = self.saved
        return True


@pytest.fixture(autouse=True)
def _restore_target():
    yield
    Target.method = ORIGINAL


def calls() -> list[str]:
    return Target().method()


def test_install_and_uninstall_restore_the_same_object():
    p = ours("a")
    p.install()
    assert calls() == ["target", "a"]
    assert original_of(Target.__dict__["method"]) is ORIGINAL
    assert p.uninstall() is True
    assert Target.__dict__["method"] is ORIGINAL


def test_install_and_uninstall_are_idempotent():
    p = ours("a")
    p.install()
    p.install()
    assert calls() == ["target", "a"]
    assert p.uninstall() and p.uninstall()
    assert Target.__dict__["method"] is ORIGINAL


def test_an_absent_attribute_is_deleted_again():
    p = Patch(Target, "extra", lambda patch: lambda self: "ours")
    p.install()
    assert Target().extra() == "ours"
    p.uninstall()
    assert "extra" not in Target.__dict__


# Two wrappers on one attribute, applied in either order and removed in either order. "ours"
# is a Patch; "theirs" is a Patch too (two of the package's own users) or a foreign wrapper.
@pytest.mark.parametrize("theirs_kind", ["patch", "foreign"])
@pytest.mark.parametrize("first", ["ours", "theirs"])
@pytest.mark.parametrize("remove_first", ["ours", "theirs"])
def test_two_wrappers_in_either_order(theirs_kind, first, remove_first):
    a = ours("ours")
    b = ours("theirs") if theirs_kind == "patch" else Foreign("theirs")
    order = [a, b] if first == "ours" else [b, a]
    for w in order:
        w.install()
    assert calls() == ["target"] + [("ours" if w is a else "theirs") for w in order]

    removal = [a, b] if remove_first == "ours" else [b, a]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        removal[0].uninstall()
        remaining = removal[1]
        if theirs_kind == "foreign" and remaining is a and order[-1] is a:
            # The foreign wrapper put back what it saw (the original), dropping ours without
            # asking: ours can only say so.
            assert calls() == ["target"]
        else:
            assert calls() == ["target", "ours" if remaining is a else "theirs"]
        removal[1].uninstall()
    assert calls() == ["target"]
    overwrapped = [w for w in caught if "was replaced again" in str(w.message)]
    buried = order[0] is removal[0]  # the first installed, uninstalled while the other sat on top
    ours_buried_by_foreign = theirs_kind == "foreign" and buried and removal[0] is a
    dropped = theirs_kind == "foreign" and order[-1] is a and removal[0] is b
    # A patch removed from under another object warns once; so does ours after a foreign
    # wrapper under it dropped it.
    assert len(overwrapped) == (
        1 if (buried and theirs_kind == "patch") or ours_buried_by_foreign or dropped else 0
    )
    if not ours_buried_by_foreign:
        assert Target.__dict__["method"] is ORIGINAL
    else:
        # Ours stays beneath the foreign wrapper's restore, switched off; the next install or
        # uninstall on the attribute takes it out.
        assert original_of(Target.__dict__["method"]) is ORIGINAL
        ours("again").install()
        assert calls() == ["target", "again"]
        assert original_of(Target.__dict__["method"]) is ORIGINAL


def test_a_switched_off_wrapper_only_calls_through():
    a = ours("ours")
    a.install()
    b = Foreign("theirs")
    b.install()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert a.uninstall() is False
    assert calls() == ["target", "theirs"]


def _patch_set() -> PatchSet:
    return PatchSet(lambda: [ours("set")])


def test_a_patch_set_stays_while_another_threads_block_is_open():
    patches = _patch_set()
    entered, release = threading.Event(), threading.Event()

    def other_thread():
        with patches.block():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert entered.wait(10)
    with patches.block():
        pass
    assert Target().method() == ["target", "set"]  # the other thread's block still wants it
    release.set()
    thread.join(10)
    assert not patches.is_installed()
    assert Target.__dict__["method"] is ORIGINAL


def test_a_patch_set_request_outlasts_blocks_until_withdrawn():
    patches = _patch_set()
    with patches.block():
        patches.request("install()")
    assert patches.wanted_by() == (("install()",), 0)
    assert Target().method() == ["target", "set"]
    patches.withdraw()
    assert Target.__dict__["method"] is ORIGINAL


def test_a_patch_set_requested_again_while_it_is_made_applies_once():
    made = []

    def make():
        made.append(1)
        if len(made) == 1:  # an import inside make() requesting the set again, in this thread
            patches.request("bootstrap")
        return [ours(f"set{len(made)}")]

    patches = PatchSet(make)
    patches.request("install()")
    assert Target().method() == ["target", "set2"]
    assert patches.wanted_by() == (("install()", "bootstrap"), 0)
    patches.withdraw()
    assert Target.__dict__["method"] is ORIGINAL
