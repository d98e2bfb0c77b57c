import type { ComfyuiSettings } from '../../config/comfyui-settings.js';

/** How long the start-up check waits for ComfyUI's answer: a server that is there answers at once. */
const CHECK_TIMEOUT_MS = 5_000;

/**
 * The start-up check of a ComfyUI engine: does the server answer `GET /system_stats` (ComfyUI's
 * server.py has served it since 2023; the web UI's settings read it)? A server that does not is
 * an outage that may pass (the GPU box still booting), so this only warns: the engine's jobs wait
 * for it with backoff until their deadline, as they would for an outage later. Never the body:
 * only whether it answered.
 */
export async function checkComfyui(settings: ComfyuiSettings, signal: AbortSignal): Promise<string | undefined> {
  const where = `comfyui:${settings.name}`;
  try {
    const res = await fetch(`${settings.baseUrl}/system_stats`, { signal: AbortSignal.any([signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]), redirect: 'manual' });
    await res.body?.cancel();
    if (res.ok) return undefined;
    return `${where}: ${settings.baseUrl} answered GET /system_stats with ${res.status}; is it a ComfyUI server? Its jobs will fail or wait until it answers`;
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    const why = typeof code === 'string' ? code : (err as Error).name === 'TimeoutError' ? `no answer in ${CHECK_TIMEOUT_MS / 1000} s` : 'unreachable';
    return `${where}: ${settings.baseUrl} does not answer now (${why}); its jobs wait for it until their deadline`;
  }
}
