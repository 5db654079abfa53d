/**
 * What a provider's fine-tuning API does for the gateway (fine-tuning-apis.ts has the ones it
 * knows): take a training file, create a job, look at it (its state in OpenAI's words), cancel it,
 * list its events and checkpoints, and hand over a result file. The worker (lifecycle.ts) keeps the
 * gateway's record; an API only speaks its provider's dialect.
 */
import type { LineOptions } from '../provider-jobs/sealed-options';
import type { FineTuningCheckpoint, FineTuningEvent, FineTuningJobItem, FineTuningStatus } from '../store/fine-tuning-jobs';

/** The provider's job as the gateway mirrors it. */
export interface ProviderJobState {
  /** The state in OpenAI's words; undefined when the provider's is one the gateway does not map. */
  status?: FineTuningStatus;
  fine_tuned_model?: string | null;
  trained_tokens?: number | null;
  estimated_finish?: number | null;
  finished_at?: number | null;
  hyperparameters?: Record<string, unknown>;
  /** The provider's ids of the files its job wrote, copied home when it ends. */
  result_files?: string[];
  error?: { code: string; message: string; param: string | null } | null;
}

export interface ProviderFineTuningApi {
  /**
   * Throws a 400 naming a field of the job the provider cannot take, so that the create request is
   * refused before anything is stored or sent; a provider that takes OpenAI's fields has none.
   */
  check?(job: FineTuningJobItem): void;
  /** Uploads one of the job's files (OpenAI's JSONL chat lines); its id at the provider. */
  uploadFile(job: FineTuningJobItem, lineOptions: LineOptions, content: Buffer, role: 'training' | 'validation'): Promise<string>;
  /** Creates the provider's job from the uploaded files; its id and first state. */
  create(job: FineTuningJobItem, lineOptions: LineOptions): Promise<{ id: string; state: ProviderJobState }>;
  look(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string): Promise<ProviderJobState>;
  cancel(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string): Promise<void>;
  /** The provider's events, each with an id of its own so that a second look stores the same items. */
  events(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string): Promise<FineTuningEvent[]>;
  /** The provider's checkpoints, `fine_tuning_job_id` the gateway's job id. */
  checkpoints(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string): Promise<FineTuningCheckpoint[]>;
  /** A result file's content, as it arrives. */
  resultFile(job: FineTuningJobItem, lineOptions: LineOptions, providerFileId: string): Promise<AsyncIterable<Buffer | string>>;
}
