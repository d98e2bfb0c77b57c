import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { routesOf } from '../../src/http/route-table.js';
import type { RouteEntry } from '../../src/http/route-table.js';
import { ErrorBody } from '../../src/http/openapi/common-schemas.js';

// ajv-formats is CommonJS; under node16 ESM its callable is the default export's default.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

/**
 * `app.inject()`, then the response checked against what its route declares for that status:
 * the JSON body against the response schema and each declared header against its schema. A
 * status the route does not declare fails too, so the OpenAPI document cannot miss an answer the
 * server gives. Routes that declare no responses at all (file downloads, hidden health checks
 * without schemas) are not checked; a URL no route matches must answer the `{error}` body.
 */
export async function checkedInject(app: FastifyInstance, opts: InjectOptions): Promise<LightMyRequestResponse> {
  const res = await app.inject(opts);
  const method = (opts.method ?? 'GET').toUpperCase();
  const path = (opts.url as string).split('?')[0]!;
  const problem = checkResponse(app, method, path, res);
  if (problem) throw new Error(`${method} ${path} answered ${res.statusCode} against its declared response: ${problem}\nbody: ${res.body.slice(0, 500)}`);
  return res;
}

/** What is wrong with `res` for the route of `method path`, or undefined. */
export function checkResponse(app: FastifyInstance, method: string, path: string, res: LightMyRequestResponse): string | undefined {
  const route = matchRoute(app, method, path);
  if (!route) return checkBody(validatorFor(ErrorBody), res);
  const responses = route.schema?.response as Record<string, Record<string, unknown>> | undefined;
  if (!responses) return undefined;
  const declared = responses[String(res.statusCode)];
  if (!declared) return `status ${res.statusCode} is not declared (declared: ${Object.keys(responses).join(', ')})`;
  const headers = (declared.headers ?? {}) as Record<string, object>;
  for (const [name, schema] of Object.entries(headers)) {
    const value = res.headers[name];
    if (value === undefined) continue;
    const check = validatorFor(schema);
    if (!check(value)) return `header ${name}: ${JSON.stringify(value)} ${describe(check)}`;
  }
  if (method === 'HEAD') return undefined;
  return checkBody(validatorFor(declared), res);
}

function checkBody(check: ValidateFunction, res: LightMyRequestResponse): string | undefined {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) return `content-type is '${type}', not application/json`;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'the body is not JSON';
  }
  return check(body) ? undefined : `body ${describe(check)}`;
}

const describe = (check: ValidateFunction) =>
  (check.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

/**
 * One Ajv per schema: component schemas carry an `$id` and appear inside many responses, which a
 * single Ajv instance would refuse as the same id added twice. Cached by schema object. Nested
 * `$id`s are dropped (nothing refers to them): a union of two components that share one
 * (CreatedJob | Job, both holding JobError) would otherwise be refused as ambiguous.
 */
const validators = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let check = validators.get(schema);
  if (!check) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    const { headers: _headers, ...rest } = schema as Record<string, unknown>;
    check = ajv.compile(withoutNestedIds(rest) as object);
    validators.set(schema, check);
  }
  return check;
}

function withoutNestedIds(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withoutNestedIds(s, false));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).flatMap(([k, v]) =>
      k === '$id' && !top ? [] : [[k, k === 'examples' || k === 'const' || k === 'enum' || k === 'default' ? v : withoutNestedIds(v, false)]],
    ),
  );
}

/** The route Fastify would pick: static segments before parameters, as find-my-way does. */
function matchRoute(app: FastifyInstance, method: string, path: string): RouteEntry | undefined {
  const candidates = routesOf(app).filter((r) => r.methods.includes(method) && patternOf(r.url).test(path));
  return candidates.sort((a, b) => paramCount(a.url) - paramCount(b.url))[0];
}

const paramCount = (url: string) => (url.match(/[:*]/g) ?? []).length;

const patterns = new Map<string, RegExp>();

function patternOf(url: string): RegExp {
  let re = patterns.get(url);
  if (!re) {
    const body = url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    re = new RegExp(`^${body}/?$`);
    patterns.set(url, re);
  }
  return re;
}
