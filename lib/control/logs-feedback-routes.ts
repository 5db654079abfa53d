/*
 * Feedback on a trace, served by the logs function: `POST /v1/feedback` and
 * `PUT /v1/feedback/{feedbackId}`, a score as Portkey's clients send it (`trace_id`, `value`,
 * `weight`, `metadata`), answered in their shape. The trace's feedback comes back with its records
 * on `GET /v1/logs/{traceId}`.
 */
import { maxLength, minLength, number, object, optional, record, refine, string, unknown } from 'zod/mini';
import { badRequest, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { answerFields, defineRoute, knownFields, messageAt } from '../http/define-route';
import { createFeedback, updateFeedback } from '../store/feedback';

const invalidCode = 'invalid_feedback';
const maxMetadataBytes = 4 * 1024;

const unknownField = (field: string) => `Unknown field "${field.slice(0, 100)}"; feedback takes trace_id, value, weight and metadata.`;

const valueRule = 'must be a whole number from -10 to 10.';
const weightRule = 'must be a number from 0 to 1.';
const metadataRule = `must be an object of at most ${maxMetadataBytes} bytes as JSON.`;

const shape = {
  value: number(messageAt(valueRule)).check(refine((n) => Number.isInteger(n) && n >= -10 && n <= 10, messageAt(valueRule))),
  weight: number(messageAt(weightRule)).check(refine((n) => n >= 0 && n <= 1, messageAt(weightRule))),
  metadata: record(string(), unknown(), messageAt(metadataRule)).check(refine((m) => JSON.stringify(m).length <= maxMetadataBytes, messageAt(metadataRule))),
};

const traceRule = 'must be the trace id of the requests, 1 to 256 characters.';
const traceId = string(messageAt(traceRule)).check(minLength(1, messageAt(traceRule)), maxLength(256, messageAt(traceRule)));

/** Portkey's SDK sends the trace as `traceID` and repeats the feedback's id in an update's body. */
const createBody = knownFields(
  { trace_id: optional(traceId), traceID: optional(traceId), value: shape.value, weight: optional(shape.weight), metadata: optional(shape.metadata) },
  unknownField,
);

const updateBody = knownFields(
  {
    value: optional(shape.value),
    weight: optional(shape.weight),
    metadata: optional(shape.metadata),
    ...answerFields(['trace_id', 'traceID', 'feedbackID', 'feedback_id']),
  },
  unknownField,
);

const saved = (id: string) => ({ status: 'success', message: 'Feedback saved', feedback_ids: [id] });

export const feedbackRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/feedback',
    role: 'member',
    body: createBody,
    invalidCode,
    async handler({ body }, { auth }) {
      const trace = body.trace_id ?? body.traceID;
      if (trace === undefined) throw badRequest('trace_id is required: the trace id of the requests the feedback is about.', 'trace_id', invalidCode);
      const id = newId('fb');
      await createFeedback(auth.workspaceId, id, trace, { value: body.value, weight: body.weight ?? 1, metadata: body.metadata ?? {} });
      return saved(id);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/feedback/{feedbackId}',
    role: 'member',
    params: object({ feedbackId: string() }),
    body: updateBody,
    invalidCode,
    async handler({ params: { feedbackId }, body: { value, weight, metadata } }, { auth }) {
      const fields = Object.fromEntries(Object.entries({ value, weight, metadata }).filter(([, given]) => given !== undefined));
      const changed = await updateFeedback(auth.workspaceId, feedbackId, fields);
      if (!changed) throw notFound(`No feedback ${feedbackId.slice(0, 100)} in this workspace.`, 'feedback_not_found');
      return saved(feedbackId);
    },
  }),
];
