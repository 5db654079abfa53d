import { badRequest } from '../../core/errors';
import { parseDataUrl } from '../openai-format/request-helpers';
import type { AudioPart, FilePart, ImagePart } from '../openai-format/types';
import type { GeminiPart } from './api';

/**
 * Media in a user message as Gemini parts: `data:` URLs become `inlineData`; http(s) and `gs://`
 * URLs become `fileData`, whose `mimeType` Gemini requires, so it is taken from the part
 * (`mime_type`, a non-OpenAI extension) or guessed from the URL's file extension. A URL without
 * either is refused with a 400 rather than sent with a guessed type.
 * @see https://ai.google.dev/gemini-api/docs/file-input-methods
 */
const mimeByExtension: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  md: 'text/md',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  m4a: 'audio/m4a',
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mov: 'video/mov',
  webm: 'video/webm',
};

/** The media type for a file URL's extension, if known. */
export function mimeTypeFromUrl(url: string): string | undefined {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not absolute: use it as it is
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return extension ? mimeByExtension[extension] : undefined;
}

function urlPart(url: string, mimeType: string | undefined, where: string): GeminiPart {
  const data = parseDataUrl(url);
  if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
  if (url.startsWith('data:')) throw badRequest(`${where} must be a base64 data: URL (data:<type>;base64,<data>).`, where, 'invalid_image_url');
  if (!/^(https?|gs):\/\//i.test(url)) throw badRequest(`${where} must be a data: URL or an http(s) or gs:// URL.`, where, 'invalid_image_url');
  const type = mimeType ?? mimeTypeFromUrl(url);
  if (!type) {
    throw badRequest(
      `${where}: Gemini needs the media type of a file URL and "${url.slice(0, 200)}" has no known file extension. Send a data: URL, a URL ending in e.g. .png or .pdf, or add "mime_type".`,
      where,
      'unknown_media_type',
    );
  }
  return { fileData: { mimeType: type, fileUri: url } };
}

export function imagePart(part: ImagePart, where: string): GeminiPart {
  const image = part.image_url as ImagePart['image_url'] & { mime_type?: string };
  if (typeof image?.url !== 'string') throw badRequest(`${where}.image_url.url must be a string.`, `${where}.image_url.url`, 'invalid_image_url');
  return urlPart(image.url, image.mime_type, `${where}.image_url.url`);
}

export function filePart(part: FilePart, where: string): GeminiPart {
  const file = part.file as FilePart['file'] & { mime_type?: string; format?: string };
  const mimeType = file?.mime_type ?? file?.format ?? (file?.filename ? mimeTypeFromUrl(file.filename) : undefined);
  if (typeof file?.file_data === 'string') return urlPart(file.file_data, mimeType, `${where}.file.file_data`);
  if (typeof file?.file_id === 'string') return urlPart(file.file_id, mimeType, `${where}.file.file_id`);
  throw badRequest(`${where}.file needs file_data (a data: URL) or file_id (a file URL).`, `${where}.file`, 'invalid_file');
}

export function audioPart(part: AudioPart, where: string): GeminiPart {
  const audio = part.input_audio;
  if (typeof audio?.data !== 'string' || typeof audio.format !== 'string') {
    throw badRequest(`${where}.input_audio needs data (base64) and format (e.g. "wav").`, `${where}.input_audio`, 'invalid_audio');
  }
  return { inlineData: { mimeType: mimeByExtension[audio.format.toLowerCase()] ?? `audio/${audio.format.toLowerCase()}`, data: audio.data } };
}
