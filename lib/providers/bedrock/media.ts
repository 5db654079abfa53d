import { badRequest, GatewayError } from '../../core/errors';
import { readBody } from '../../core/read-body';
import { sendOutbound } from '../../outbound/http-client';
import { parseDataUrl } from '../openai-format/request-helpers';
import type { FilePart } from '../openai-format/types';
import type { ContentBlock, DocumentFormat, ImageFormat } from './api';

/**
 * Images and documents for Converse, which takes media as bytes (or an S3 URI), never as a web URL.
 * A `data:` URL is decoded; an `s3://` URL becomes an S3 location (the signing role must be able to
 * read it); an http(s) URL is fetched by the gateway — through `sendOutbound`, so the SSRF address
 * guard applies — with a size limit of Bedrock's own per-image maximum and a short timeout.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html
 */

/** Bedrock's limit for one image (3.75 MB). */
export const maxImageBytes = 3_750_000;
const fetchTimeoutMs = 10_000;

const imageFormats: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const imageExtensions: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', gif: 'gif', webp: 'webp' };

const documentFormats: Record<string, DocumentFormat> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

const imageFormatList = 'PNG, JPEG, GIF or WebP';

export async function imageBlock(url: string, where: string): Promise<ContentBlock> {
  const data = parseDataUrl(url);
  if (data) {
    const format = imageFormats[data.mediaType.toLowerCase()];
    if (!format) throw badRequest(`${where}: Bedrock takes ${imageFormatList} images; got ${data.mediaType}.`, where, 'unsupported_image_format');
    return { image: { format, source: { bytes: data.data } } };
  }
  if (url.startsWith('s3://')) {
    const format = imageExtensions[url.split('.').pop()!.toLowerCase()];
    if (!format)
      throw badRequest(`${where}: an s3:// image must end in .png, .jpg, .jpeg, .gif or .webp so its format is known.`, where, 'unsupported_image_format');
    return { image: { format, source: { s3Location: { uri: url } } } };
  }
  if (/^https?:\/\//i.test(url)) {
    const bytes = await fetchImage(url, where);
    const format = sniffImageFormat(bytes);
    if (!format) throw badRequest(`${where}: the image at ${new URL(url).host} is not a ${imageFormatList} image.`, where, 'unsupported_image_format');
    return { image: { format, source: { bytes: bytes.toString('base64') } } };
  }
  throw badRequest(`${where} must be a data: URL, an http(s) URL or an s3:// URI of an image.`, where, 'invalid_image_url');
}

/** Fetches an image for a request; every failure is the client's to fix, so it is a 400. */
async function fetchImage(url: string, where: string): Promise<Buffer> {
  const target = new URL(url);
  const failed = (reason: string) =>
    badRequest(
      `${where}: could not fetch the image at ${target.host} (${reason}). Bedrock needs the image bytes; send it as a data: URL instead.`,
      where,
      'image_fetch_failed',
    );
  let response;
  try {
    response = await sendOutbound({
      url: target,
      method: 'GET',
      headers: { accept: 'image/png, image/jpeg, image/gif, image/webp' },
      signal: AbortSignal.timeout(fetchTimeoutMs),
      target: 'the image host',
    });
  } catch (error) {
    throw failed(error instanceof GatewayError && error.status === 400 ? error.message : (error as Error).message || 'connection failed');
  }
  if (response.status !== 200) {
    response.body.resume();
    throw failed(`status ${response.status}${response.status >= 300 && response.status < 400 ? ', redirects are not followed' : ''}`);
  }
  try {
    return await readBody(response.body, maxImageBytes, 'The image');
  } catch (error) {
    throw failed(
      error instanceof GatewayError && error.code === 'provider_response_too_large'
        ? `larger than Bedrock's ${maxImageBytes} byte limit`
        : (error as Error).message,
    );
  }
}

/** The format by the file's signature bytes, which a web server's content-type cannot spoil. */
function sniffImageFormat(bytes: Buffer): ImageFormat | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 6 && bytes.toString('latin1', 0, 4) === 'GIF8') return 'gif';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/**
 * An OpenAI `file` part (`file_data` as a data URL) as a Converse document. Bedrock allows only
 * letters, digits, single spaces, hyphens, parentheses and square brackets in a document name, and
 * the names in one request must differ; `names` collects those already used.
 */
export function documentBlock(file: FilePart['file'] | undefined, where: string, names: Set<string>): ContentBlock {
  if (!file?.file_data) {
    throw badRequest(
      `${where}: Bedrock cannot read uploaded file ids; send the file inline as file.file_data (a data: URL) with a filename.`,
      `${where}.file`,
      'unsupported_file_reference',
    );
  }
  const data = parseDataUrl(file.file_data);
  const format = data && documentFormats[data.mediaType.toLowerCase()];
  if (!data || !format) {
    throw badRequest(
      `${where}.file.file_data must be a base64 data: URL of a PDF, CSV, DOC, DOCX, XLS, XLSX, HTML, TXT or Markdown file.`,
      `${where}.file.file_data`,
      'unsupported_file_format',
    );
  }
  const base = (file.filename ?? 'document').replace(/\.[A-Za-z0-9]{1,5}$/, '');
  let name =
    base
      .replace(/[^A-Za-z0-9\s\-()[\]]+/g, '-')
      .replace(/\s+/g, ' ')
      .trim() || 'document';
  for (let n = 2; names.has(name); n++) name = `${name.replace(/ \(\d+\)$/, '')} (${n})`;
  names.add(name);
  return { document: { format, name, source: { bytes: data.data } } };
}
