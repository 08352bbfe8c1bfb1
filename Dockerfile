# Kilowatch image: one image, the role chosen by KW_ROLE (all | api | ingest).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN npm i -g pnpm@10
COPY . .
RUN pnpm install --frozen-lockfile && pnpm --filter @kilowatch/web build

FROM node:20-bookworm-slim
WORKDIR /app
RUN npm i -g pnpm@10
COPY --from=build /app /app
ENV HOST=0.0.0.0 PORT=8080 KW_DATA_DIR=/data
EXPOSE 8080
CMD ["pnpm", "start"]
