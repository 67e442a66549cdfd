# syntax=docker/dockerfile:1
# Switchyard gateway image (docs/deploy.md). Two stages: the build stage has the
# compilers and dev dependencies; the runtime stage only what `npm start` runs.

FROM node:20-slim AS build
# better-sqlite3 and re2 compile from source where no prebuilt binary is reachable.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off for the install (the project's prepare would build before the sources are here); the
# dependencies' own install scripts (native modules) then run in the rebuild.
RUN npm ci --include=dev --ignore-scripts && npm rebuild
COPY tsconfig.json ./
COPY src ./src
COPY test ./test
COPY bench ./bench
COPY console ./console
# tsc (dist/) and the console (console/dist); then only the gateway's own code and production dependencies stay.
RUN npm run build \
 && rm -rf dist/test dist/bench \
 && npm prune --omit=dev

FROM node:20-slim AS runtime
# The malloc settings are npm start's (docs/deploy.md, "Memory"): freed memory goes back to the system.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    GATEWAY_DATA_DIR=/data \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/console/dist ./console/dist
# The model catalog is read at run time from its source path (src/catalog/catalog.ts).
COPY --from=build --chown=root:root /app/src/catalog/models.json ./src/catalog/models.json
# The code is root's and read-only to the process; only the data dir is its own.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
# node:20-slim has no curl: node asks /health itself (200 with "ok" or "degraded": both mean the process serves).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/health').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=25", "dist/src/main.js"]
