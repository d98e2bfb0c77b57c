import { Type } from '@sinclair/typebox';
import { StopReasonField } from '../../services/remote/remote-views.js';
import { ErrorBody, errorResponses } from './common-schemas.js';

/** An `{error}` answer of the worker protocol, described for its route. */
export const workerBody = (description: string) => ({ ...ErrorBody, description });

/** 409: the worker must stop (`reason`), or its report went backwards (no reason). */
export const WorkerConflict = Type.Object(
  {
    error: ErrorBody.properties.error,
    reason: Type.Optional(StopReasonField),
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
