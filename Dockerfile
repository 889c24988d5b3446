# capreg serve as a container (docs/deploy.md): build with the full toolchain, run on a slim,
# non-root Node 20 image holding only the compiled code and production dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build:ts && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/lib ./lib
COPY --from=build --chown=root:root /app/bin ./bin
# The node user (uid 1000) cannot write the code it runs.
USER node
EXPOSE 8765 9464
ENTRYPOINT ["node", "/app/bin/capreg.js", "serve"]
CMD ["--http", "--host", "0.0.0.0", "--metrics-port", "9464", "--metrics-host", "0.0.0.0", "--manifest", "/etc/capreg/manifest/manifest.json", "--principals", "/etc/capreg/principals/principals.yaml"]
