import { fineTuningRoute } from '../lib/fine-tuning/jobs-route';
import { streamingHandler } from '../lib/http/lambda/handlers';

/** /v1/fine_tuning/jobs…: the gateway's fine-tuning jobs, or a provider's fine-tuning API passed through. */
export const handler = streamingHandler(fineTuningRoute);
