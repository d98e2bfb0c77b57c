import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3Server } from '../helpers/s3-server.js';

describe('the test S3 server', () => {
  it('stores and returns an object in its bucket', async () => {
    const s3 = await startS3Server();
    try {
      const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'a/b.txt', Body: 'hello' }));
      const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'a/b.txt' }));
      expect(await got.Body!.transformToString()).toBe('hello');
      client.destroy();
    } finally {
      await s3.close();
    }
  });
});
