import { ConfigError } from './readers.js';

type Value = string | number | boolean;

export type OutputStoreConfig =
  | { readonly kind: 'disk' }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      /** The key prefix without a trailing slash; '' for the bucket's root. */
      readonly prefix: string;
      readonly endpoint: string | undefined;
      readonly region: string | undefined;
      readonly forcePathStyle: boolean;
      /** Both or neither; neither: the AWS SDK's own credential chain. */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
    };

export interface RetentionConfig {
  readonly outputDays: number;
  readonly jobDays: number;
  readonly assetDays: number;
  readonly webhookLogDays: number;
}

/** `disk` or `s3://bucket[/prefix]` with the s3_* settings (the environment's AWS_* variables fill what they leave open). */
export function readOutputStore(values: Readonly<Record<string, Value | undefined>>, env: Readonly<Record<string, string | undefined>>): OutputStoreConfig {
  const id = values.s3_access_key_id as string | undefined;
  const secret = values.s3_secret_access_key as string | undefined;
  if (values.output_store === 'disk' || values.output_store === undefined) {
    if (values.output_urls === 'presign') throw new ConfigError('output_urls presign needs an s3:// output_store');
    return { kind: 'disk' };
  }
  if ((id === undefined) !== (secret === undefined)) throw new ConfigError('s3_access_key_id and s3_secret_access_key go together: set both or neither');
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(values.output_store as string)!;
  const endpoint = (values.s3_endpoint as string | undefined) ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
  return {
    kind: 's3',
    bucket: m[1]!,
    prefix: m[2]!.replace(/\/+$/, ''),
    endpoint,
    region: (values.s3_region as string | undefined) ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined),
    forcePathStyle: values.s3_force_path_style as boolean,
    credentials: id !== undefined && secret !== undefined ? { accessKeyId: id, secretAccessKey: secret } : undefined,
  };
}


/** `where` names the setting as the user wrote it: `--port`, `MEDIAGEN_PORT` or `file.json: port`. */
