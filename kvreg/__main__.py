from kvreg.cli import main

main()
