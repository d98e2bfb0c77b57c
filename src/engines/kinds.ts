import { COMFYUI_KIND } from './comfyui/comfyui-kind.js';
import { COMMAND_KIND } from './command/command-kind.js';
import type { EngineKind } from './engine-kind.js';
import { kindNameOf } from './engine-kind.js';
import { LOCAL_KIND } from './local/local-kind.js';
import { PROVIDER_KIND } from './providers/provider-kind.js';

/**
 * Every engine kind, once (docs/architecture.md, "Engine kinds"): a new kind is its folder, with a
 * descriptor (engine-kind.ts), and a line here. `remote:<pool>` is no kind: no engine of this
 * process runs those models (bindings.ts).
 */
export const ENGINE_KINDS: readonly EngineKind[] = Object.freeze([LOCAL_KIND, PROVIDER_KIND, COMFYUI_KIND, COMMAND_KIND]);

/** The kind of `kinds` an engine id names (`comfyui:gpu` -> ComfyUI's); undefined: no such kind, or an instance of a kind that has none. */
export function kindOf(engine: string, kinds: readonly EngineKind[] = ENGINE_KINDS): EngineKind | undefined {
  const name = kindNameOf(engine);
  const kind = kinds.find((k) => k.name === name);
  // `local` is a kind without instances; `local:x` names none of its engines, as `comfyui` names none of ComfyUI's.
  if (!kind || (kind.section !== undefined) !== engine.includes(':')) return undefined;
  return kind;
}
