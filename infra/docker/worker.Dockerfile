# syntax=docker/dockerfile:1
# The worker image (webhook deliveries). Build from the repository root:
#   docker build -f infra/docker/worker.Dockerfile -t commerce-worker .
# It runs `node dist/main.js` and answers GET /health on WORKER_HEALTH_PORT (8081).
ARG NODE_VERSION=22

# Build: install the workspace from the lockfile, build the worker and the packages it uses,
# then `pnpm deploy` the worker with its production dependencies only into /deploy.
FROM node:${NODE_VERSION}-slim AS build
ENV CI=true
# npm, not corepack: Node 20's corepack fails to verify pnpm's signature.
RUN npm install -g pnpm@10.34.9
WORKDIR /repo
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline \
 && pnpm exec turbo run build --filter=@commerce/worker... \
 && pnpm --filter @commerce/worker --prod deploy /deploy

# Run: the deploy folder alone, owned by root and run by the unprivileged `node` user.
FROM node:${NODE_VERSION}-slim
ENV NODE_ENV=production WORKER_HEALTH_PORT=8081 UPLOADS_DIR=/data/uploads
WORKDIR /app
COPY --from=build /deploy ./
# CSV exports and imported files with STORAGE=disk (the API's volume); the rest stays read-only.
RUN mkdir -p /data/uploads && chown node:node /data/uploads
USER node
EXPOSE 8081
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.WORKER_HEALTH_PORT||8081)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM: the worker stops taking jobs and waits for the running ones (give it
# WEBHOOK_TIMEOUT_MS and some more before a SIGKILL: compose's stop_grace_period, k8s's
# terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
