import { createHash } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * Where every "random" choice of the local engine comes from. The same request must give the same
 * bytes, so nothing here reads the time or Math.random: a scene is a pure function of its key.
 */

export function sha256(...parts: readonly string[]): Buffer {
  const h = createHash('sha256');
  // A separator that cannot occur in JSON text keeps ("ab","c") and ("a","bc") apart.
  for (const p of parts) h.update(p, 'utf8').update('\u0000');
  return h.digest();
}

/** A number in [0, 1) from a text, for choices that must follow the text alone (e.g. a style id). */
export function unitHash(text: string): number {
  return sha256(text).readUInt32BE(0) / 2 ** 32;
}

/**
 * The key a render's PRNG is seeded from. With a numeric `seed` the key is (model, prompt, seed),
 * so the seed alone picks the scene for a prompt and the other parameters act only through their
 * own, visible effects. Without one, the whole request stands in for the seed, so identical
 * requests still give identical bytes.
 */
export function sceneKey(model: string, request: Readonly<Record<string, unknown>>): Buffer {
  const prompt = typeof request.prompt === 'string' ? request.prompt : '';
  const seed = typeof request.seed === 'number' ? `seed:${request.seed}` : `request:${canonicalJson(request)}`;
  return sha256(model, prompt, seed);
}

/** sfc32: small, fast and good enough for layouts; 128 bits of state from a digest. */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 16) throw new Error('a PRNG key needs at least 16 bytes');
    this.#key = key;
    this.#a = key.readUInt32BE(0);
    this.#b = key.readUInt32BE(4);
    this.#c = key.readUInt32BE(8);
    this.#d = key.readUInt32BE(12);
    // The first outputs of sfc32 are poorly mixed.
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 2 ** 32;
  }

  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, maxInclusive: number): number {
    return Math.floor(this.range(min, maxInclusive + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /**
   * An independent stream for a named part, taken from the key rather than the current state, so
   * adding draws to one part leaves the others alone.
   */
  fork(label: string): Prng {
    return new Prng(sha256(this.#key.toString('hex'), label));
  }
}
