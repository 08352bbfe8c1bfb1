# Kilowatch image: one image, the role chosen by KW_ROLE (all | api | ingest).
#
# Built once: `pnpm build` compiles the server to plain JavaScript (api/dist) and builds the web client
# (web/dist); the runtime stage holds those and the API's production dependencies only (no tsx, no
# TypeScript, no dev tools). `node` itself is PID 1 (exec form, no shell or pnpm in between), so SIGTERM
# reaches the graceful stop: ingest commits and acknowledges what it holds and leaves the shared group,
# the API closes its sockets. It runs as the unprivileged `node` user; data lives in /data.
FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN npm i -g pnpm@10
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm build \
 && pnpm --filter @kilowatch/api --prod deploy --legacy /out \
 && cp -r api/dist /out/dist \
 && mkdir -p /out/web \
 && cp -r web/dist /out/web/dist

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    KW_DATA_DIR=/data \
    KW_WEB_DIST=/app/web/dist
WORKDIR /app
COPY --from=build --chown=root:root /out /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only: a replica whose database is down is alive (it answers 503 and recovers by itself).
# Orchestrators route traffic by /api/health/ready (compose.yaml, README "Run it on servers").
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
