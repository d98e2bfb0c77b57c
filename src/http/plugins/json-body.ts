import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '../../domain/error-catalogue.js';

/** Deeper JSON than any request body needs is refused before it reaches JSON.parse or Ajv. */
export const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw invalid('the request body is empty; send a JSON object');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw invalid(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (err) {
    // V8 quotes the start of the input; a reader needs the reason, not the echo.
    const reason = (err as Error).message.replace(/, (?:\.\.\.)?".*$/s, '');
    throw invalid(`the request body is not valid JSON: ${reason}`);
  }
}

/** JSON (RFC 8259) is UTF-8; a body declared or encoded otherwise would be silently corrupted. */
function checkEncoding(request: FastifyRequest): void {
  const coding = request.headers['content-encoding']?.trim().toLowerCase();
  if (coding && coding !== 'identity') {
    throw new DomainError('unsupported_media_type', `Content-Encoding '${coding}' is not supported; send the body uncompressed`);
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError('unsupported_media_type', `charset '${charset}' is not supported; send JSON as UTF-8`);
  }
}

/** application/json is the only request body type. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      checkEncoding(request);
      let text: string;
      try {
        text = utf8.decode(body as Buffer);
      } catch {
        throw invalid('the request body is not valid UTF-8');
      }
      done(null, parseJsonBody(text));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
