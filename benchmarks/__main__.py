from benchmarks.lowering import main

raise SystemExit(main())
