from certdp.cli import main

raise SystemExit(main())
