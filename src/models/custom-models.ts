import type { TObject } from '@sinclair/typebox';
import { ConfigError } from '../config/readers.js';
import type { CustomModelDecl } from '../config/custom-model-settings.js';
import { customPriceRule } from './custom-prices.js';
import { customRequestSchema } from './custom-schema.js';
import { OUTPUT_KINDS, mainOutputTypes, operationIdOf } from './model.js';
import type { ModelModule, OutputKind } from './model.js';
import { MODELS } from './registry.js';

/**
 * Models declared in the config file's `models` (src/config/custom-model-settings.ts reads their shape),
 * built into model modules like the registry's: the catalog, the price table, the routes, the
 * OpenAPI document, GET /models, the MCP tools, admission and billing then treat them as any
 * other. Their jobs run where their `engine` says: a remote pool, a provider, ComfyUI or a command
 * engine, or a chain of them (bindings.ts).
 */

/** Each kind's media types: a custom model's declared output types are of its kind. */

const MAKES: Readonly<Record<OutputKind, string>> = { image: 'an image', video: 'a video', audio: 'audio', '3d': 'a 3D model' };

/** The OpenAPI component of its request body: `image/acme/gradient-v1` → `ImageAcmeGradientV1Request`. */
export const customRequestName = (path: string): string => `${operationIdOf(path).slice('generate'.length)}Request`;

function checkKind(decl: CustomModelDecl): OutputKind {
  const kind = OUTPUT_KINDS.find((k) => k === decl.kind);
  if (!kind) throw new ConfigError(`${decl.where}.kind: '${decl.kind}' is not a kind; the kinds are ${OUTPUT_KINDS.join(', ')}`);
  if (decl.path.split('/')[0] !== kind) throw new ConfigError(`${decl.where}.path must start with its kind: ${kind}/<vendor>/<name>`);
  return kind;
}

function checkOutputTypes(decl: CustomModelDecl, kind: OutputKind): void {
  const ofKind = mainOutputTypes({ kind });
  const bad = decl.outputTypes?.find((t) => !ofKind.includes(t));
  if (bad !== undefined) throw new ConfigError(`${decl.where}.output.content_types: '${bad}' is not an output type of kind ${kind}; the types are ${ofKind.join(', ')}`);
}

/** Its path, route name and body component are its own: none is a built-in's or an earlier declaration's. */
function checkClashes(decl: CustomModelDecl, taken: readonly ModelModule[], builtIns: readonly ModelModule[]): void {
  const same = taken.find((m) => m.path === decl.path);
  if (same) {
    throw new ConfigError(
      same.custom ? `${decl.where}: ${decl.path} is declared twice (also ${same.custom.where})` : `${decl.where}: ${decl.path} is a built-in model; give the custom model a path of its own`,
    );
  }
  const id = operationIdOf(decl.path).toLowerCase();
  const twin = taken.find((m) => operationIdOf(m.path).toLowerCase() === id);
  if (twin) {
    throw new ConfigError(`${decl.where}: its path differs from ${twin.path}'s only in '.', '_', '-' or case, so both would have one OpenAPI operation name; rename one`);
  }
  const name = customRequestName(decl.path);
  if (builtIns.some((m) => m.requestName === name)) throw new ConfigError(`${decl.where}: its request component name ${name} is a built-in model's; rename the model`);
}

function customModel(decl: CustomModelDecl, kind: OutputKind): ModelModule {
  const request = customRequestSchema(decl.request, decl.where);
  const price = customPriceRule(decl.price, request, decl.where);
  const [, ...name] = decl.path.split('/');
  return Object.freeze({
    path: decl.path,
    summary: decl.summary ?? `Generate ${MAKES[kind]} with ${name.join('/')}`,
    kind,
    // A plain JSON Schema where the built-ins have TypeBox's; every reader treats it as JSON.
    request: Object.freeze(request) as unknown as TObject,
    requestName: customRequestName(decl.path),
    aliases: [],
    price,
    zeroDataRetention: decl.zeroDataRetention,
    // Its chain's first engine, as a built-in's `engine`; the chain itself is the bindings' to read.
    engine: decl.engine.engines[0]!,
    custom: Object.freeze({ where: decl.where, chain: decl.engine }),
    ...(decl.timeoutMs !== undefined ? { timeoutMs: decl.timeoutMs } : {}),
    ...(decl.outputTypes ? { outputTypes: decl.outputTypes } : {}),
    ...(decl.deprecation ? { deprecation: decl.deprecation } : {}),
  });
}

/**
 * The models this server offers: the registry's, then the config file's `models` in their order.
 * A ConfigError naming the declaration (and the field) for anything it cannot be.
 */
export function modelsWith(decls: readonly CustomModelDecl[], builtIns: readonly ModelModule[] = MODELS): readonly ModelModule[] {
  const models = [...builtIns];
  for (const decl of decls) {
    const kind = checkKind(decl);
    checkOutputTypes(decl, kind);
    checkClashes(decl, models, builtIns);
    models.push(customModel(decl, kind));
  }
  return Object.freeze(models);
}
