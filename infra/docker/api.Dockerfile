# syntax=docker/dockerfile:1
# The API image. Build from the repository root:
#   docker build -f infra/docker/api.Dockerfile -t commerce-api .
# It runs `node dist/main.js` (port 3000); `node scripts/migrate.js` is the migration job.
ARG NODE_VERSION=22

# Build: install the workspace from the lockfile, build the API and the packages it uses, then
# `pnpm deploy` the API with its production dependencies only into /deploy.
FROM node:${NODE_VERSION}-slim AS build
ENV CI=true
# npm, not corepack: Node 20's corepack fails to verify pnpm's signature.
RUN npm install -g pnpm@10.34.9
WORKDIR /repo
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline \
 && pnpm exec turbo run build --filter=@commerce/api... \
 && pnpm --filter @commerce/api --prod deploy /deploy

# Run: the deploy folder alone, owned by root and run by the unprivileged `node` user.
FROM node:${NODE_VERSION}-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 UPLOADS_DIR=/data/uploads
WORKDIR /app
COPY --from=build /deploy ./
# Uploaded images with STORAGE=disk (a volume shared by the instances); the rest stays read-only.
RUN mkdir -p /data/uploads && chown node:node /data/uploads
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
