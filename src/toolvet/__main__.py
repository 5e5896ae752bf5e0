from toolvet.cli import main

main()
