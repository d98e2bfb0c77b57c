import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../models/schema-kit.js';
import { ErrorBody, errorResponses } from './common-schemas.js';

/** An `{error}` answer of the worker protocol, described for its route. */
export const workerBody = (description: string) => ({ ...ErrorBody, description });

/** 409: the worker must stop (`reason`), or its report went backwards (no reason). */
export const WorkerConflict = Type.Object(
  {
    error: ErrorBody.properties.error,
    reason: Type.Optional(
      StringEnum(['cancelled', 'completed', 'deleted', 'lease_lost', 'timeout'], {
        description:
          "Why the worker must stop: the job was cancelled, has completed (a repeated complete), was deleted, its lease is no longer this worker's (requeued, reclaimed or failed), or it passed its deadline and failed",
        examples: ['cancelled'],
      }),
    ),
  },
  {
    $id: 'WorkerConflict',
    description: 'Stop working on the job and drop what it made (with `reason`); nothing changed',
    examples: [{ error: 'the job was cancelled; stop working on it', reason: 'cancelled' }],
  },
);

/** The answers every call about a held job can give beside its success. */
export const WorkerErrors = {
  ...errorResponses(400, 413, 415),
  404: workerBody('No such job id'),
  409: WorkerConflict,
};
