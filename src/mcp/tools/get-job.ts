import { Type } from '@sinclair/typebox';
import { Job } from '../../services/common/job-view.js';
import { outputLinks, readJob } from '../job-results.js';
import { defineTool } from '../tool.js';

export const JobId = Type.String({ description: 'The job identifier (UUID) that generate or list_jobs gave', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] });

export const getJob = defineTool({
  name: 'get_job',
  title: 'Get a job',
  description:
    'A job in its current status. Once completed, `result.urls` holds its outputs (also as resource links; the URLs need no token); ' +
    'a failed job has `error`. Statuses: backlogged, queued, scheduled, processing, sampling, intermediate-complete (a preview in ' +
    '`result`), then completed, failed or cancelled.',
  input: Type.Object({ job_id: JobId }, { additionalProperties: false }),
  output: Job,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const job = await readJob(deps.jobs, ctx, input.job_id);
    return { structured: job, links: outputLinks(job) };
  },
});
