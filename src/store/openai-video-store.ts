/**
 * What OpenAI's video object shows of a video created through POST /v1/videos that its job does
 * not keep (services/openai/): the model id the create named when it was not the path.
 */
export interface OpenAiVideoStore {
  /** Records the id a video's create named; a replayed create keeps the first. */
  recordModel(jobId: string, model: string): Promise<void>;
  /** The ids recorded for these jobs; a job without one is absent. */
  modelsOf(jobIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}
