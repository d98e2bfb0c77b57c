# mediagen's container image (docs/deploy.md, "Containers").
#
#   docker build -t mediagen .
#   docker run -p 8080:8080 -v mediagen-data:/data mediagen
#
# Every setting is an environment variable (MEDIAGEN_*, docs/config.md); the command takes the same
# flags as `mediagen` (`serve --role worker`, `admin workspace create ...`).
ARG BASE=node:22-bookworm-slim

# ---- build: compile the native module, build dist/, keep the production dependencies only ----
FROM ${BASE} AS build
ENV DEBIAN_FRONTEND=noninteractive \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
# better-sqlite3 is compiled here rather than downloaded (prebuild-install fetches from GitHub, which
# not every build machine reaches): python3, make, g++ and the Node headers of the base.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: no lifecycle script runs by surprise (not `prepare`, not an install script we
# did not choose); the two packages whose scripts matter are rebuilt by name.
RUN npm ci --ignore-scripts \
 && npm rebuild esbuild \
 && npm_config_nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")" \
    npm rebuild better-sqlite3 --build-from-source \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
COPY . .
# Debian's ffmpeg (runtime stage) replaces the bundled static binaries: ffmpeg on PATH is found
# first (docs/engine.md), so their 140 MB go; so do the packages' source maps (200 MB, read by
# nothing at run time), ESRGAN-thick's weights but the x4 ones it is chosen for (84 MB; docs/engine.md)
# and better-sqlite3's compiler output but its one .node file.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/@ffmpeg-installer/linux-* node_modules/@ffprobe-installer/linux-* node_modules/.cache \
 && find node_modules -type f -name '*.map' -delete \
 && rm -rf node_modules/@upscalerjs/esrgan-thick/models/x2 node_modules/@upscalerjs/esrgan-thick/models/x3 \
    node_modules/@upscalerjs/esrgan-thick/models/x8 node_modules/@upscalerjs/*/assets \
 && mv node_modules/better-sqlite3/build/Release/better_sqlite3.node /tmp/ \
 && rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && mkdir -p node_modules/better-sqlite3/build/Release \
 && mv /tmp/better_sqlite3.node node_modules/better-sqlite3/build/Release/ \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

# ---- runtime ----
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 mediagen \
 && useradd --system --uid 10001 --gid mediagen --home-dir /data --no-create-home --shell /usr/sbin/nologin mediagen \
 && mkdir /data && chown mediagen:mediagen /data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
ENV NODE_ENV=production \
    MEDIAGEN_DATA_DIR=/data \
    MEDIAGEN_PORT=8080
VOLUME /data
EXPOSE 8080
USER mediagen
# /healthz needs no token; a role-worker process has no listener (compose.yaml turns this off there).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.MEDIAGEN_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# tini is PID 1: it forwards SIGTERM to node (which drains, then exits 0) and reaps the children of
# the command engine and ffmpeg that would otherwise stay zombies.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/main.js"]
CMD ["serve", "--host", "0.0.0.0"]
