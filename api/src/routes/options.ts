/** Options every route plugin receives from `buildApp`. */

/** Broker and ingest state of the embedded deployment, merged into GET /api/health. */
export type HealthExtras = () => Promise<Record<string, unknown>>;

export interface RouteOptions {
  health?: HealthExtras;
}
