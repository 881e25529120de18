# enginebench in an image, for the agents recipe (deploy/kubernetes/agents-job.yaml) and any
# host without a Rust toolchain:
#   docker build -t YOUR-REGISTRY/enginebench .
#   docker build --build-arg WITH_SERVER=1 -t YOUR-REGISTRY/enginebench:server .   # + MariaDB 10.11
#   docker push YOUR-REGISTRY/enginebench
# The image runs `enginebench`; agents point it at a server with --dsn. With WITH_SERVER=1 it
# also holds Debian's MariaDB 10.11 (and the RocksDB plugin), so throwaway servers run in it.

# Debian 12 (bookworm), as the servers enginebench is tested against; the toolchain is the
# crate's rust-version.
FROM rust:1.89-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmariadb-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
 && strip target/release/enginebench

FROM debian:bookworm-slim
ARG WITH_SERVER=0
# The client library the binary links (libmariadb3), its TLS and zlib, and certificates.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmariadb3 libssl3 zlib1g ca-certificates \
 && if [ "$WITH_SERVER" = 1 ]; then \
      apt-get install -y --no-install-recommends mariadb-server mariadb-client mariadb-plugin-rocksdb; \
    fi \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/enginebench /usr/local/bin/enginebench
# Results go to the working directory unless --json/--db say otherwise.
WORKDIR /work
ENTRYPOINT ["enginebench"]
CMD ["--help"]
