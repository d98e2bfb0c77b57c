// Room services/assets/: uploaded files: staging, inspecting, storing, listing and deleting them, their quota, and
// reading one back as a job's input URL.
// May import from services/: identity, common; test/unit/layers.test.ts holds the order.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { Log } from '../../lib/log.js';
import { msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { invalid, notFound } from '../../domain/error-catalogue.js';
import { EngineError } from '../../engines/engine.js';
// A type only: the inspection itself (sharp, ffmpeg) is loaded on the first upload.
import type { InspectedMedia } from '../../engines/media/media-inspect.js';
import { newOutputKey } from '../../outputs/output-store.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { AssetRecord } from '../../store/asset-store.js';
import type { Store } from '../../store/store.js';
import { lockExisting } from '../common/admission-counts.js';
import { removeOrLeaveToJanitor } from '../common/removal.js';
import { MAX_DESCRIPTION_CHARS, MAX_FILENAME_CHARS, descriptionTooLong, quotaExceeded, tooLargeUpload } from './asset-rules.js';
import { parseAssetUrl } from './asset-urls.js';
import { toAssetView } from './asset-view.js';
import { pageOf } from '../common/paging.js';
import type { AssetPageView, AssetView, DeletedAssetView } from './asset-view.js';
import { Idempotency } from '../common/idempotency.js';
import type { HeldKey } from '../common/idempotency.js';
import type { AuthContext } from '../identity/identity.js';

/** What the file inspection found (src/engines/media/media-inspect.ts), or why the file is refused. */
export type Inspection = ({ readonly ok: true } & InspectedMedia) | { readonly ok: false; readonly message: string };

/** Reads a file the server wrote and says what it is; the decoders' limits apply inside. */
export type Inspector = (path: string, signal: AbortSignal) => Promise<Inspection>;

export interface AssetPolicy {
  /** Largest upload, bytes (`asset_max_bytes`). */
  readonly maxBytes: number;
  /** Bytes of live assets a workspace may keep (`asset_quota_bytes`); 0: no quota. */
  readonly quotaBytes: number;
}

const UPLOAD_NAME = 'upload';

/** An upload written to the store's scratch space, not yet an asset. */
export interface StagedUpload {
  readonly key: string;
  readonly path: string;
  readonly sizeBytes: number;
  /** SHA-256 of the bytes, hex: what an Idempotency-Key's request fingerprint holds of the file. */
  readonly sha256: string;
  /** Removes what was written; idempotent. */
  discard(): Promise<void>;
  /** Once the file is in its place: removes the emptied scratch directory. */
  stored(): Promise<void>;
}

export interface AssetDetails {
  readonly description?: string | undefined;
  readonly filename?: string | undefined;
  /** Makes a retried upload safe (as on generation requests); its shape was checked by the transport. */
  readonly idempotencyKey?: string | null | undefined;
}

/** A new asset, or the first answer to the same idempotency key (`replayed`). */
export interface CommittedAsset {
  readonly asset: AssetView;
  readonly replayed: boolean;
}

/** Counts and hashes bytes through, failing the moment they pass the limit. */
function byteLimit(maxBytes: number, seen: { bytes: number; readonly hash: ReturnType<typeof createHash> }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen.bytes += chunk.length;
      if (seen.bytes > maxBytes) return done(tooLargeUpload(maxBytes));
      seen.hash.update(chunk);
      done(null, chunk);
    },
  });
}

const UPLOAD_ENDPOINT = '/assets';

/**
 * Uploading, reading, listing and deleting a workspace's assets, and reading an asset's file as a
 * job's input. Files live in the output store under a key of their own; rows say what they are.
 */
export class AssetService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #outputs: OutputStore;
  readonly #inspect: Inspector;
  readonly #policy: AssetPolicy;
  readonly #idempotency: Idempotency;

  constructor(store: Store, clock: Clock, outputs: OutputStore, inspect: Inspector, policy: AssetPolicy, idempotency: Idempotency = new Idempotency(store, clock)) {
    this.#store = store;
    this.#clock = clock;
    this.#outputs = outputs;
    this.#inspect = inspect;
    this.#policy = policy;
    this.#idempotency = idempotency;
  }

  get policy(): AssetPolicy {
    return this.#policy;
  }

  /**
   * Streams an upload into scratch space under a fresh key, never holding it whole in memory. A
   * workspace already at its quota is refused before a byte is written; a file past the size
   * limit fails the moment it passes it, and nothing it wrote is left.
   */
  async stage(auth: AuthContext, file: Readable, signal: AbortSignal): Promise<StagedUpload> {
    const { quotaBytes, maxBytes } = this.#policy;
    if (quotaBytes > 0) {
      const used = await this.#store.assets.usedBytes(auth.workspace.id);
      if (used >= quotaBytes) throw quotaExceeded(used, quotaBytes);
    }
    const key = newOutputKey();
    const discard = () => this.#outputs.remove(key);
    try {
      const scratch = await this.#outputs.scratch(key);
      const path = join(scratch.dir, UPLOAD_NAME);
      const seen = { bytes: 0, hash: createHash('sha256') };
      await pipeline(file, byteLimit(maxBytes, seen), createWriteStream(path, { flags: 'wx' }), { signal });
      return { key, path, sizeBytes: seen.bytes, sha256: seen.hash.digest('hex'), discard, stored: () => scratch.dispose() };
    } catch (err) {
      await discard().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Makes a staged upload an asset: the file is inspected (kind from its bytes, limits checked
   * before decoding), the quota checked under the workspace lock, the file moved to its name and
   * the row written. With an idempotency key, a retry of the same upload (same bytes, description
   * and file name) answers the first asset instead. Any refusal or failure removes the staged file.
   */
  async commit(auth: AuthContext, staged: StagedUpload, details: AssetDetails, publicUrl: string, signal: AbortSignal): Promise<CommittedAsset> {
    let held: HeldKey | undefined;
    try {
      const description = details.description;
      if (description !== undefined && description.length > MAX_DESCRIPTION_CHARS) throw descriptionTooLong();
      // The message names the file (`the file is ...`): the form field is `file`.
      const found = await this.#inspect(staged.path, signal);
      if (!found.ok) throw invalid(found.message);
      // The key is taken after the inspection, which can take a while: its lease covers only the
      // store writes below, not a decode a retry would otherwise wait out or repeat.
      if (details.idempotencyKey) {
        const begun = await this.#idempotency.begin(auth.workspace.id, {
          key: details.idempotencyKey,
          endpoint: UPLOAD_ENDPOINT,
          body: { sha256: staged.sha256, size_bytes: staged.sizeBytes, description: description ?? null, filename: details.filename ?? null },
          webhookUrl: null,
          zeroDataRetention: false,
        });
        if (begun.kind === 'replay') {
          await staged.discard().catch(() => undefined);
          return { asset: begun.body as unknown as AssetView, replayed: true };
        }
        held = begun.held;
      }
      const fileName = `asset.${found.extension}`;
      await this.#outputs.put(staged.key, fileName, staged.path);
      await staged.stored();
      const metadata = {
        kind: found.kind,
        ...(found.durationSeconds !== null ? { duration_seconds: found.durationSeconds } : {}),
        ...(details.filename ? { filename: details.filename.slice(0, MAX_FILENAME_CHARS) } : {}),
      };
      const asset = await this.#insert(
        auth.workspace.id,
        {
          id: newId(),
          workspaceId: auth.workspace.id,
          outputKey: staged.key,
          fileName,
          sizeBytes: staged.sizeBytes,
          mimeType: found.mimeType,
          width: found.width,
          height: found.height,
          description: description === undefined || description === '' ? null : description,
          metadata,
        },
        publicUrl,
        held,
      );
      return { asset, replayed: false };
    } catch (err) {
      await staged.discard().catch(() => undefined);
      if (held) await this.#idempotency.release(held);
      throw err;
    }
  }

  async #insert(workspaceId: string, asset: Omit<AssetRecord, 'createdAt' | 'deletedAt'>, publicUrl: string, held: HeldKey | undefined): Promise<AssetView> {
    const now = msToMicros(this.#clock.nowMs());
    const { quotaBytes } = this.#policy;
    return this.#store.transaction(async (tx) => {
      // Two uploads at once must not both fit under the quota: the second waits for the first.
      await lockExisting(tx, workspaceId);
      if (quotaBytes > 0) {
        const used = await tx.assets.usedBytes(workspaceId);
        if (used + asset.sizeBytes > quotaBytes) throw quotaExceeded(used, quotaBytes, asset.sizeBytes);
      }
      const view = toAssetView(await tx.assets.insertAsset(asset, now), publicUrl);
      // The key's answer is stored with the asset: both or neither.
      if (held) await this.#idempotency.complete(tx, held, view.id, view);
      return view;
    });
  }

  async get(auth: AuthContext, id: string, publicUrl: string): Promise<AssetView> {
    const asset = isUuid(id) ? await this.#store.assets.getAsset(auth.workspace.id, id.toLowerCase()) : undefined;
    if (!asset) throw notFound(`asset '${id}' not found`);
    return toAssetView(asset, publicUrl);
  }

  async list(auth: AuthContext, query: { readonly before?: Micros | undefined; readonly limit: number }, publicUrl: string): Promise<AssetPageView> {
    const rows = await this.#store.assets.listAssets({
      workspaceId: auth.workspace.id,
      ...(query.before !== undefined ? { before: query.before } : {}),
      limit: query.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, query.limit, (a) => a.createdAt);
    return { items: page.map((a) => toAssetView(a, publicUrl)), next_cursor };
  }

  /**
   * Deletes the asset: its URL stops being served when this commits. Its file is removed at once
   * unless a job created before now may still read it; then the output janitor removes it once
   * those jobs have ended (jobs already created from it are unaffected).
   */
  async delete(auth: AuthContext, id: string, log: Pick<Log, 'warn'>): Promise<DeletedAssetView> {
    if (!isUuid(id)) throw notFound(`asset '${id}' not found`);
    const now = msToMicros(this.#clock.nowMs());
    const gone = await this.#store.transaction(async (tx) => {
      // Under the lock job creation takes, so a job naming the asset is either stored first
      // (and keeps the file) or refused after.
      await lockExisting(tx, auth.workspace.id);
      return tx.assets.deleteAsset(auth.workspace.id, id.toLowerCase(), now);
    });
    if (!gone) throw notFound(`asset '${id}' not found`);
    if (!gone.filesStillNeeded) {
      await removeOrLeaveToJanitor(this.#outputs, gone.asset.outputKey, log, { assetId: gone.asset.id }, "a deleted asset's file");
    }
    return { success: true, message: 'asset deleted', id: gone.asset.id, deleted: true };
  }

  /** Whether the file under this key is a live asset's (the file route serves only those). */
  async fileServed(key: string, name: string): Promise<boolean> {
    const asset = await this.#store.assets.findAssetByKey(key);
    return asset !== undefined && asset.deletedAt === null && asset.fileName === name;
  }

  /**
   * The bytes of the asset an input URL names, read from the output store; undefined when the URL
   * names no asset of this server (it is then fetched like any URL). A deleted asset's file is
   * still read: the job was admitted while it was live, and the file is kept until the job ends.
   */
  async readInput(url: string, field: string): Promise<Buffer | undefined> {
    const ref = parseAssetUrl(url);
    if (!ref) return undefined;
    const asset = await this.#store.assets.findAssetByKey(ref.key);
    if (!asset || asset.fileName !== ref.name) return undefined;
    const file = await this.#outputs.open(ref.key, ref.name);
    // Kept while the job may run (DELETE and the janitor see to it); gone means the store lost it.
    if (!file) throw new EngineError('input_fetch_failed', `${field}: the asset's file is no longer stored`);
    const chunks: Buffer[] = [];
    for await (const chunk of file.stream()) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}
