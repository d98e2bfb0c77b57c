import { Type } from '@sinclair/typebox';
import { defineTool } from '../tool.js';
import { JobId } from './get-job.js';

const DeletedJob = Type.Object({
  job_id: Type.String({ format: 'uuid', description: 'The deleted job' }),
  deleted: Type.Literal(true, { description: 'Always true' }),
});

export const deleteJob = defineTool({
  name: 'delete_job',
  title: 'Delete a job',
  description: 'Deletes a job and its output files; their URLs stop working. A job still in progress is cancelled first and not charged.',
  input: Type.Object({ job_id: JobId }, { additionalProperties: false }),
  output: DeletedJob,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(deps, input, ctx) {
    return { structured: await deps.jobs.delete(ctx.caller, input.job_id, ctx.log) };
  },
});
