import type { FastifySchemaCompiler } from 'fastify';

const passThrough = () => true;

/**
 * Route schemas describe the API (OpenAPI) but validate nothing here: request bodies are checked
 * by the use case (services/jobs/generation.ts, with models/validation.ts), so every transport gives
 * the same answer, and query strings and headers have hand-written rules with clearer messages.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = () => passThrough;
