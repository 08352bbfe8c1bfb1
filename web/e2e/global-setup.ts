/**
 * Builds the client once for every browser test file; each file reads the output directory with
 * `inject('webDist')` and starts its own API (its own demo data, so files cannot disturb each other).
 */
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { apiUnavailable, buildWeb, chromiumUnavailable } from '../src/testing.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The production build of the client, or '' when the browser tests cannot run here. */
    webDist: string;
  }
}

export default async function setup(project: TestProject) {
  if (chromiumUnavailable() ?? apiUnavailable()) {
    project.provide('webDist', '');
    return;
  }
  const dist = await buildWeb();
  project.provide('webDist', dist);
  return () => rmSync(dist, { recursive: true, force: true });
}
