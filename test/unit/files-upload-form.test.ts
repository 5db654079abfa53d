import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { readUploadForm } from '../../lib/files/upload-form';

const boundary = 'form-boundary';
const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };

function form(parts: Array<{ name: string; filename?: string; data: string }>): Buffer {
  const text = parts
    .map(({ name, filename, data }) => {
      const disposition = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`;
      return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n${data}\r\n`;
    })
    .join('');
  return Buffer.from(`${text}--${boundary}--\r\n`);
}

function refusal(body: Buffer, requestHeaders: Record<string, string> = headers): GatewayError {
  try {
    readUploadForm({ headers: requestHeaders, body });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('the form was accepted');
}

describe('readUploadForm', () => {
  it('reads the file and purpose, and ignores other fields', () => {
    const read = readUploadForm({
      headers,
      body: form([
        { name: 'expires_after[seconds]', data: '3600' },
        { name: 'purpose', data: ' fine-tune ' },
        { name: 'file', filename: 'train.jsonl', data: '{"messages":[]}\n' },
      ]),
    });
    expect(read).toMatchObject({ purpose: 'fine-tune', filename: 'train.jsonl' });
    expect(read.bytes.toString()).toBe('{"messages":[]}\n');
  });

  it('accepts each of OpenAI’s upload purposes', () => {
    for (const purpose of ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals']) {
      expect(
        readUploadForm({
          headers,
          body: form([
            { name: 'purpose', data: purpose },
            { name: 'file', filename: 'f', data: 'x' },
          ]),
        }).purpose,
      ).toBe(purpose);
    }
  });

  it('refuses each missing or wrong field with a 400 naming it', () => {
    const file = { name: 'file', filename: 'f.jsonl', data: 'x' };
    expect(refusal(form([file]))).toMatchObject({ status: 400, param: 'purpose', code: 'missing_required_parameter' });
    expect(refusal(form([{ name: 'purpose', data: 'training' }, file]))).toMatchObject({ status: 400, param: 'purpose', code: 'invalid_purpose' });
    expect(refusal(form([{ name: 'purpose', data: 'batch_output' }, file])).message).toMatch(/written by the gateway/);
    expect(refusal(form([{ name: 'purpose', data: 'batch' }]))).toMatchObject({ status: 400, param: 'file', code: 'missing_required_parameter' });
    expect(
      refusal(
        form([
          { name: 'purpose', data: 'batch' },
          { name: 'file', data: 'text' },
        ]),
      ),
    ).toMatchObject({ param: 'file', code: 'invalid_file' });
    expect(
      refusal(
        form([
          { name: 'purpose', data: 'batch' },
          { ...file, data: '' },
        ]),
      ),
    ).toMatchObject({ param: 'file', code: 'invalid_file' });
    expect(
      refusal(
        form([
          { name: 'purpose', data: 'batch' },
          { ...file, filename: 'n'.repeat(513) },
        ]),
      ),
    ).toMatchObject({ param: 'file', code: 'invalid_file' });
  });

  it('refuses a body that is not multipart/form-data, or not well formed', () => {
    expect(refusal(Buffer.from('{}'), { 'content-type': 'application/json' })).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    expect(refusal(Buffer.from('{}'), {})).toMatchObject({ status: 415 });
    expect(refusal(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch`))).toMatchObject({
      status: 400,
      code: 'invalid_multipart',
    });
  });
});
