/**
 * One source of truth for request and response shapes: the valibot schemas in core. Requests are
 * validated with valibot (so field errors carry the docs/spec.md §5 messages); responses are serialized and
 * documented with JSON schemas generated from the same valibot schemas.
 */
import { ErrorBodySchema, MESSAGES, nextTurn } from '@kilowatch/core';
import { toJsonSchema } from '@valibot/to-json-schema';
import type {
  FastifyPluginAsync,
  FastifyPluginOptions,
  FastifyReply,
  FastifyRequest,
  FastifySchemaCompiler,
  FastifyTypeProvider,
  RawServerDefault,
} from 'fastify';
import * as v from 'valibot';
import { type FieldErrors, NotFoundError, ValidationError } from './errors.ts';

type AnySchema = v.GenericSchema;
const VALIBOT = Symbol.for('kilowatch.valibot');

export type JsonSchema = Record<string, unknown>;

/** Type-only mark: which valibot schema a request part's JSON schema was built from. */
declare const PARSED: unique symbol;

/** A request part's JSON schema that also carries, for the compiler only, the type its valibot schema parses to. */
export type RequestSchema<S extends AnySchema = AnySchema> = JsonSchema & { readonly [PARSED]: S };

/**
 * Route handlers see `req.body`, `req.params` and `req.query` as what their `request()` schema parses them
 * to (the validator compiler hands the handler valibot's output), so no handler casts what it was given.
 */
export interface ValibotTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends { readonly [PARSED]: infer S extends AnySchema }
    ? v.InferOutput<S>
    : unknown;
  serializer: unknown;
}

/** A route plugin whose handlers are typed by their schemas (`ValibotTypeProvider`). */
export type TypedRoutes<Options extends FastifyPluginOptions> = FastifyPluginAsync<
  Options,
  RawServerDefault,
  ValibotTypeProvider
>;

function convert(schema: AnySchema, typeMode: 'input' | 'output'): JsonSchema {
  const out = toJsonSchema(schema, { target: 'openapi-3.0', typeMode, errorMode: 'ignore' }) as JsonSchema;
  delete out.$schema;
  return tidy(out) as JsonSchema;
}

/** OpenAPI 3.0 forbids an empty `required` list; drop it wherever the converter wrote one. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(node)) {
    if (k === 'required' && Array.isArray(val) && val.length === 0) continue;
    out[k] = tidy(val);
  }
  return out;
}

/** A request part (body, params, querystring): its JSON schema documents it, valibot validates it. */
export function request<S extends AnySchema>(schema: S): RequestSchema<S> {
  const json = convert(schema, 'input');
  Object.defineProperty(json, VALIBOT, { value: schema, enumerable: false });
  return json as RequestSchema<S>;
}

/** A response body: serialized (unknown fields dropped) and documented from the valibot schema. */
export function response(schema: AnySchema): JsonSchema {
  return convert(schema, 'output');
}

export const errorResponse = response(ErrorBodySchema);

/**
 * Serializer for answers that are mostly long numeric columns (series, comparisons): V8's own
 * JSON.stringify writes them ~2.5× faster than the schema-compiled serializer, which checks every
 * element (a year of hourly min/avg/max of three phases, 1.5 MB: 8 ms against 20 ms), with the same
 * bytes, here in pieces (`jsonInPieces`). The handler's result already has exactly the schema's fields
 * (it is the store's typed result), and error bodies are built field by field in the error handler.
 */
export const numericColumnsSerializer = () => (data: unknown) =>
  // Fastify sends a serializer's Buffer as it is (reply.js takes a string or a Buffer); its types name
  // only the string.
  jsonInPieces(data) as string;

/** Elements of a long array written per JSON.stringify call (~70 KB of text for doubles). */
const SLICE = 4096;
/** Text gathered before it becomes bytes: below V8's large-object size, so it dies young. */
const PIECE = 64 * 1024;

/**
 * A slice of whole numbers from 1e6 to 2^53 (epoch-millisecond times) as JSON: V8 writes such numbers
 * as doubles, slowly; split into two small integers they are written about twice as fast. Null when an
 * element is anything else.
 */
function largeIntegers(v: readonly unknown[], from: number, to: number): string | null {
  for (let i = from; i < to; i++) {
    const x = v[i];
    if (typeof x !== 'number' || !(x >= 1e6 && x <= Number.MAX_SAFE_INTEGER) || x % 1 !== 0) return null;
  }
  let out = '';
  for (let i = from; i < to; i++) {
    const x = v[i] as number;
    const hi = Math.floor(x / 1e6);
    const lo = x - hi * 1e6;
    const pad =
      lo < 10 ? '00000' : lo < 100 ? '0000' : lo < 1e3 ? '000' : lo < 1e4 ? '00' : lo < 1e5 ? '0' : '';
    out += `${i === from ? '' : ','}${hi}${pad}${lo}`;
  }
  return out;
}

/**
 * JSON.stringify's text, as bytes, built from pieces of at most ~64 KB: long arrays are written a
 * slice at a time. One string for a year of columns would be a 1.5 MB large object that only a full
 * garbage collection frees — and those collections were the tail of the year-long answers. A time axis
 * that appears again in the same answer (every comparison block shares one) is written once and its
 * text repeated.
 */
export function jsonInPieces(data: unknown): Buffer | string {
  const writer = piecesOf(data, false);
  let step = writer.next();
  while (!step.done) step = writer.next();
  return step.value;
}

/** Time spent writing an answer between two turns of the event loop, at most about. */
const TURN_MS = 8;

/**
 * `jsonInPieces` for long answers, giving the event loop a turn every few milliseconds of writing (a
 * century of days or a year of 15-minute columns is ~100 ms of it); `tidy` writes fractional numbers
 * to six decimals as `tidyNumbers` does.
 */
export async function jsonInTurns(data: unknown, tidy: boolean): Promise<Buffer | string> {
  const writer = piecesOf(data, tidy);
  let since = performance.now();
  let step = writer.next();
  while (!step.done) {
    if (performance.now() - since >= TURN_MS) {
      await nextTurn();
      since = performance.now();
    }
    step = writer.next();
  }
  return step.value;
}

/** Array elements from which an answer is written in turns (`longAnswersInTurns`). */
export const LONG_ANSWER_ELEMENTS = 20_000;

/**
 * A preSerialization hook: an answer of `LONG_ANSWER_ELEMENTS` array elements or more is written by
 * `jsonInTurns` (the event loop gets a turn every few ms), sent as the bytes it gives; shorter answers go
 * on to the route's serializer as they are (tidied when `tidy`, by `tidy`).
 */
export function longAnswersInTurns(tidy: (<T>(answer: T) => T) | null) {
  return async (_req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (payload === null || typeof payload !== 'object' || Buffer.isBuffer(payload)) return payload;
    if (reply.statusCode >= 300 || arrayElements(payload, LONG_ANSWER_ELEMENTS) < LONG_ANSWER_ELEMENTS)
      return tidy ? tidy(payload) : payload;
    // The bytes are the answer: the route's serializer would write them again.
    reply.serializer((bytes: unknown) => bytes as string);
    return jsonInTurns(payload, tidy !== null);
  };
}

/** Numbers in the arrays of an answer, counted up to `atLeast` (a cheap test for a long answer). */
export function arrayElements(data: unknown, atLeast: number): number {
  let n = 0;
  const walk = (v: unknown, depth: number): void => {
    if (n >= atLeast || depth > 6) return;
    if (Array.isArray(v)) {
      n += v.length;
      if (v.length > 0 && typeof v[0] === 'object') for (const x of v) walk(x, depth + 1);
    } else if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v))
      for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(data, 0);
  return n;
}

/** Six decimals, as `tidyNumber` in analytics/tidy.ts. */
const TIDY_SCALE = 1e6;
const TIDY_LIMIT = Number.MAX_SAFE_INTEGER / TIDY_SCALE;
const tidied = (x: unknown): unknown =>
  typeof x !== 'number' || Number.isInteger(x) || !(Math.abs(x) < TIDY_LIMIT)
    ? x
    : Math.round(x * TIDY_SCALE) / TIDY_SCALE;

/** The writer behind `jsonInPieces` and `jsonInTurns`: pauses (yields) after each slice of an array. */
function* piecesOf(data: unknown, tidy: boolean): Generator<void, Buffer | string, void> {
  const buffers: Buffer[] = [];
  let text = '';
  const put = (s: string) => {
    text += s;
    if (text.length >= PIECE) {
      buffers.push(Buffer.from(text, 'utf8'));
      text = '';
    }
  };
  const stringify = (v: readonly unknown[]) => JSON.stringify(tidy ? v.map(tidied) : v);
  const written = new Map<readonly unknown[], string[]>();
  function* writeArray(v: readonly unknown[], parts: string[]): Generator<void, void, void> {
    if (v.length <= SLICE) {
      const ints = largeIntegers(v, 0, v.length);
      parts.push(ints === null ? stringify(v) : `[${ints}]`);
      return;
    }
    parts.push('[');
    for (let i = 0; i < v.length; i += SLICE) {
      const end = Math.min(v.length, i + SLICE);
      const part = largeIntegers(v, i, end) ?? stringify(v.slice(i, end)).slice(1, -1);
      parts.push(i === 0 ? part : `,${part}`);
      yield;
    }
    parts.push(']');
  }
  function* write(v: unknown): Generator<void, void, void> {
    if (Array.isArray(v)) {
      let parts = written.get(v);
      if (!parts && v.length <= SLICE && v.some((x) => x !== null && typeof x === 'object')) {
        // A short array of objects or arrays (Grafana's targets, a comparison's blocks): each element is
        // written on its own, so the long arrays inside them are written a slice per turn too. As one
        // JSON.stringify call, four targets of 43,200 points each held the event loop for ~80 ms.
        put('[');
        for (let i = 0; i < v.length; i++) {
          if (i > 0) put(',');
          yield* write(v[i]);
        }
        put(']');
        return;
      }
      if (!parts) {
        parts = [];
        if (tidy && v.some((x) => x !== null && typeof x === 'object')) {
          // Rows of objects (a list) to tidy: each row written on its own.
          parts.push('[');
          for (let i = 0; i < v.length; i++) {
            const inner = piecesOf(v[i], tidy);
            let step = inner.next();
            while (!step.done) step = inner.next();
            parts.push(i === 0 ? String(step.value) : `,${String(step.value)}`);
            if (i % 256 === 255) yield;
          }
          parts.push(']');
        } else yield* writeArray(v, parts);
        // Only time axes are kept for a repeat: keeping every column's text alive until the answer is
        // done would move it out of the young generation (the full collections `PIECE` avoids).
        if (v.length >= 64 && largeIntegers(v, 0, 1) !== null) written.set(v, parts);
      }
      for (const p of parts) put(p);
    } else if (v !== null && typeof v === 'object' && !(v instanceof Date) && !('toJSON' in v)) {
      put('{');
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
        put(`${first ? '' : ','}${JSON.stringify(k)}:`);
        first = false;
        yield* write(x);
      }
      put('}');
    } else put(JSON.stringify(tidy ? tidied(v) : v) ?? 'null');
  }
  yield* write(data);
  if (buffers.length === 0) return text;
  if (text) buffers.push(Buffer.from(text, 'utf8'));
  return Buffer.concat(buffers);
}
export const noContent = { type: 'null', description: 'No content' } as const;

/** The schema of an object entry at `path`, looking through pipes, optionals and nullables. */
function entrySchema(root: AnySchema, path: readonly PropertyKey[]): AnySchema | undefined {
  let node: unknown = root;
  for (const key of path) {
    node = unwrap(node);
    const entries = (node as { entries?: Record<PropertyKey, unknown> } | undefined)?.entries;
    node = entries?.[key];
    if (!node) return undefined;
  }
  return node as AnySchema;
}

function unwrap(node: unknown): unknown {
  let n = node as { pipe?: unknown[]; wrapped?: unknown; type?: string } | undefined;
  for (let i = 0; i < 10 && n; i++) {
    if (n.pipe && n.pipe[0] !== n) n = n.pipe[0] as typeof n;
    else if (n.wrapped) n = n.wrapped as typeof n;
    else break;
  }
  return n;
}

/**
 * `{ field: [messages] }` from valibot issues; nested paths are dotted (`schedule.weekday.0.from`). A
 * missing key reports the field's own message (what its schema says of `undefined`), so a form left
 * empty reads "Country is required.", not valibot's generic text.
 */
export function fieldErrors(issues: readonly v.BaseIssue<unknown>[], root?: AnySchema): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) {
    const keys = issue.path?.map((p) => p.key as PropertyKey) ?? [];
    const key = keys.map(String).join('.') || '_';
    let message = issue.message;
    if (
      root &&
      issue.kind === 'schema' &&
      issue.type === 'object' &&
      issue.input === undefined &&
      keys.length > 0
    ) {
      const entry = entrySchema(root, keys);
      const own = entry ? v.safeParse(entry, undefined) : undefined;
      if (own && !own.success && own.issues[0]) message = own.issues[0].message;
    }
    const list = out[key] ?? [];
    if (!list.includes(message)) list.push(message);
    out[key] = list;
  }
  return out;
}

/**
 * The dotted path of the first text holding a NUL character (U+0000), or null. PostgreSQL cannot store
 * NUL in text, so such a request is refused here, as unreadable, before it reaches the database.
 */
export function nulField(data: unknown, path = '', depth = 0): string | null {
  if (typeof data === 'string') return data.includes('\u0000') ? path || '_' : null;
  if (data === null || typeof data !== 'object' || depth > 32) return null;
  for (const [k, x] of Object.entries(data)) {
    if (k.includes('\u0000')) return path ? `${path}.${k}` : k;
    const found = nulField(x, path ? `${path}.${k}` : k, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** Validates with the valibot schema attached by `request()`; a bad path parameter names nothing → 404. */
export const valibotValidatorCompiler: FastifySchemaCompiler<JsonSchema> = ({ schema, httpPart }) => {
  const valibot = (schema as Record<symbol, AnySchema | undefined>)[VALIBOT];
  if (!valibot)
    throw new Error(`route schema for ${httpPart ?? 'a request part'} is not built with request()`);
  return (data: unknown) => {
    const nul = nulField(data);
    if (nul !== null) {
      if (httpPart === 'params') return { error: new NotFoundError() };
      return { error: new ValidationError({ [nul]: [MESSAGES.malformed] }, MESSAGES.malformed) };
    }
    const result = v.safeParse(valibot, data ?? undefined);
    if (result.success) return { value: result.output };
    if (httpPart === 'params') return { error: new NotFoundError() };
    return { error: new ValidationError(fieldErrors(result.issues, valibot)) };
  };
};
