"""`python -m grpc_service`: serve A2A over gRPC until SIGTERM or SIGINT."""

from grpc_service.server import main

if __name__ == "__main__":
    main()
