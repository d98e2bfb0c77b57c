/**
 * A streaming reader for ComfyUI's two unbounded answers, `GET /queue` and `GET /history`: prompts
 * queued from ComfyUI's web UI carry their whole UI workflow (`extra_data.extra_pnginfo`), so 200 of
 * them make an answer of tens of MiB. The reader walks the JSON bytes as they arrive and hands back
 * only the short strings near the top (ids, `client_id`); everything deeper is skipped unread, so
 * memory stays a few KiB whatever the server holds.
 */

export type JsonPath = readonly (string | number)[];

/** Strings longer than this are not handed back (prompt ids and client ids are far shorter). */
const MAX_STRING_BYTES = 512;
/** Nesting deeper than this is not JSON ComfyUI writes. */
const MAX_DEPTH = 1024;

interface Frame {
  readonly array: boolean;
  key: string | undefined;
  index: number;
}

const enum S {
  Value,
  Key,
  Colon,
  After,
  Str,
  Literal,
  /** Inside a container too deep to hold anything handed back: only brackets and strings counted. */
  Skip,
  Done,
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

export class JsonScanError extends Error {}

/**
 * Feeds bytes in any chunking; calls `onString(path, value)` for every string value whose path is
 * at most `depth` deep (an object's keys and an array's indexes, from the top). Throws JsonScanError
 * on bytes that are not JSON; `end()` throws when the document is incomplete.
 */
export class JsonScanner {
  readonly #stack: Frame[] = [];
  #state: S = S.Value;
  #bytes: number[] = [];
  #keep = false;
  #isKey = false;
  #escape = false;
  #skipDepth = 0;
  #skipInString = false;
  #skipEscape = false;

  constructor(
    private readonly depth: number,
    private readonly onString: (path: JsonPath, value: string) => void,
  ) {}

  write(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      if (this.#state === S.Skip) {
        i = this.#skip(chunk, i);
        continue;
      }
      if (this.#state === S.Str && !this.#keep && !this.#escape) {
        // Most of the bytes are deep strings (a UI workflow's text): skip to their end at once.
        while (i < chunk.length && chunk[i] !== 0x22 && chunk[i] !== 0x5c) i++;
        if (i === chunk.length) return;
      }
      this.#byte(chunk[i]!);
    }
  }

  end(): void {
    if (this.#state !== S.Done) throw new JsonScanError('the JSON ended early');
  }

  #byte(b: number): void {
    switch (this.#state) {
      case S.Str:
        return this.#stringByte(b);
      case S.Literal:
        // Numbers, true, false, null: letters, digits, sign, dot, exponent.
        if ((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a) || b === 0x2b || b === 0x2d || b === 0x2e || b === 0x45) return;
        this.#state = S.After;
        return this.#byte(b);
      case S.Value:
        if (WS.has(b)) return;
        if (b === 0x5d && this.#top()?.array && this.#top()!.index === 0) return this.#close(true);
        return this.#value(b);
      case S.Key:
        if (WS.has(b)) return;
        if (b === 0x7d && this.#top()!.key === undefined) return this.#close(false);
        if (b !== 0x22) throw new JsonScanError('expected a key');
        return this.#openString(true);
      case S.Colon:
        if (WS.has(b)) return;
        if (b !== 0x3a) throw new JsonScanError('expected a colon');
        this.#state = S.Value;
        return;
      case S.After: {
        if (WS.has(b)) return;
        const top = this.#top();
        if (!top) throw new JsonScanError('bytes after the JSON');
        if (b === 0x2c) {
          if (top.array) {
            top.index++;
            this.#state = S.Value;
          } else this.#state = S.Key;
          return;
        }
        if (b === (top.array ? 0x5d : 0x7d)) return this.#close(top.array);
        throw new JsonScanError('expected a comma or a closing bracket');
      }
      case S.Skip:
        return;
      case S.Done:
        if (!WS.has(b)) throw new JsonScanError('bytes after the JSON');
    }
  }

  /** Skips to the end of a deep container; returns the index of its closing bracket, or the chunk's length. */
  #skip(chunk: Uint8Array, from: number): number {
    let depth = this.#skipDepth;
    let inString = this.#skipInString;
    let escape = this.#skipEscape;
    let i = from;
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (inString) {
        if (escape) escape = false;
        else if (b === 0x5c) escape = true;
        else if (b === 0x22) inString = false;
      } else if (b === 0x22) inString = true;
      else if (b === 0x7b || b === 0x5b) depth++;
      else if ((b === 0x7d || b === 0x5d) && --depth === 0) {
        this.#state = this.#stack.length === 0 ? S.Done : S.After;
        break;
      }
    }
    this.#skipDepth = depth;
    this.#skipInString = inString;
    this.#skipEscape = escape;
    return i;
  }

  #value(b: number): void {
    if ((b === 0x7b || b === 0x5b) && this.#stack.length >= this.depth) {
      // Nothing in it is shallow enough to hand back.
      this.#state = S.Skip;
      this.#skipDepth = 1;
      this.#skipInString = false;
      this.#skipEscape = false;
      return;
    }
    if (b === 0x7b || b === 0x5b) {
      if (this.#stack.length >= MAX_DEPTH) throw new JsonScanError('the JSON nests too deep');
      this.#stack.push({ array: b === 0x5b, key: undefined, index: 0 });
      this.#state = b === 0x5b ? S.Value : S.Key;
      return;
    }
    if (b === 0x22) return this.#openString(false);
    if (b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e) {
      this.#state = S.Literal;
      return;
    }
    throw new JsonScanError('expected a value');
  }

  #openString(isKey: boolean): void {
    this.#isKey = isKey;
    // A key is kept when the value under it may be handed back; a value when its path is shallow enough.
    this.#keep = this.#stack.length <= this.depth;
    this.#bytes = [];
    this.#escape = false;
    this.#state = S.Str;
  }

  #stringByte(b: number): void {
    if (this.#escape) {
      this.#escape = false;
      this.#push(0x5c);
      this.#push(b);
      return;
    }
    if (b === 0x5c) {
      this.#escape = true;
      return;
    }
    if (b !== 0x22) return this.#push(b);
    const text = this.#keep && this.#bytes.length <= MAX_STRING_BYTES ? decode(this.#bytes) : undefined;
    this.#bytes = [];
    if (this.#isKey) {
      this.#top()!.key = text ?? '';
      this.#state = S.Colon;
      return;
    }
    this.#state = S.After;
    if (text !== undefined) this.onString(this.#path(), text);
  }

  #push(b: number): void {
    if (this.#keep && this.#bytes.length <= MAX_STRING_BYTES) this.#bytes.push(b);
  }

  #close(array: boolean): void {
    const top = this.#stack.pop();
    if (!top || top.array !== array) throw new JsonScanError('a bracket does not match');
    this.#state = this.#stack.length === 0 ? S.Done : S.After;
  }

  #top(): Frame | undefined {
    return this.#stack.at(-1);
  }

  #path(): JsonPath {
    return this.#stack.map((f) => (f.array ? f.index : (f.key ?? '')));
  }
}

/** The string's bytes with its escapes read (JSON.parse of the quoted text); undefined when they are not valid. */
function decode(bytes: readonly number[]): string | undefined {
  try {
    return JSON.parse(`"${Buffer.from(bytes).toString('utf8')}"`) as string;
  } catch {
    return undefined;
  }
}
