from troubleshooter.cli import main

raise SystemExit(main())
