/**
 * Energy and money answers are sums of doubles, and a sum of register steps such as 0.013 + 0.012 carries
 * binary noise (a day of 25.83 kWh came back as 25.829999999999927). Those answers are kept to a
 * millionth — a milliwatt-hour, a millionth of a złoty — far below any register's resolution, so they read
 * as the meter's own numbers do. Whole numbers (times, counts, ids) and strings are left as they are.
 */
import type { FastifyInstance } from 'fastify';
import { longAnswersInTurns } from '../schema.ts';

const SCALE = 1e6;
const LIMIT = Number.MAX_SAFE_INTEGER / SCALE;

/** `x` to six decimals. */
export function tidyNumber(x: number): number {
  // Past 2^53 millionths a double holds fewer than six decimals: rounding would only add error.
  if (Number.isInteger(x) || !(Math.abs(x) < LIMIT)) return x;
  return Math.round(x * SCALE) / SCALE;
}

/** A copy of an answer with every fractional number to six decimals. */
export function tidyNumbers<T>(answer: T): T {
  if (typeof answer === 'number') return tidyNumber(answer) as T;
  if (Array.isArray(answer)) return answer.map(tidyNumbers) as T;
  if (answer === null || typeof answer !== 'object' || answer instanceof Date) return answer;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(answer)) out[k] = tidyNumbers(v);
  return out as T;
}

/**
 * Tidies every object answer of the routes registered in `app` (an encapsulated plugin's scope); long
 * answers are tidied as they are written, in turns of the event loop (`longAnswersInTurns`).
 */
export function tidyAnswers(app: FastifyInstance): void {
  app.addHook('preSerialization', longAnswersInTurns(tidyNumbers));
}
