import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { optionalNumber } from '../parameters';

/**
 * A heuristic tripwire for prompt injection: known phrasings of the common attack families, each
 * with a weight, combined as independent evidence (1 − Π(1 − w)) into a score from 0 to 1. It knows
 * English phrasings only and is beaten by paraphrase, translation, typos or encodings it does not
 * look for; it also fires on text that merely discusses these attacks. It catches copy-pasted
 * attacks cheaply; it is not a defence on its own.
 */

interface Signal {
  name: string;
  weight: number;
  pattern: RegExp;
}

// Each pattern is anchored on a literal word and its repetitions are bounded or separated by
// literals, so a scan stays linear in the text.
const signals: Signal[] = [
  {
    name: 'instruction_override',
    weight: 0.6,
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:(?:all|any|every|the|your|my|these|those|of)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|initial|original|system|developer|safety)\s+(?:instructions?|prompts?|rules|directions|guidelines|directives|context|messages?|constraints|polic(?:y|ies))\b/i,
  },
  {
    name: 'new_instructions',
    weight: 0.35,
    pattern: /\b(?:your\s+new\s+(?:instructions|task|role|rules)\s+(?:is|are)|from\s+now\s+on,?\s+you\s+(?:are|will|must)|new\s+system\s+prompt)\b/i,
  },
  {
    name: 'role_play_jailbreak',
    weight: 0.5,
    pattern:
      /\b(?:DAN|do\s+anything\s+now|you\s+are\s+no\s+longer\s+(?:an?\s+)?(?:AI|assistant|bound|restricted|ChatGPT|Claude)|pretend\s+(?:that\s+)?you\s+(?:are|have)\s+no\s+(?:rules|restrictions|guidelines|filters)|act\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil|jailbroken)|stay\s+in\s+character\s+no\s+matter)\b/i,
  },
  {
    // Words that also occur in harmless questions ("enable developer mode"): weak evidence alone.
    name: 'jailbreak_vocabulary',
    weight: 0.25,
    pattern:
      /\b(?:developer\s+mode|jailbreak(?:en|ed|ing)?|god\s+mode|(?:without|free\s+(?:of|from))\s+(?:any\s+)?(?:restrictions|filters|limitations|guidelines|censorship))\b/i,
  },
  {
    name: 'system_prompt_exfiltration',
    weight: 0.5,
    pattern:
      /\b(?:(?:reveal|show|print|display|repeat|output|leak|tell\s+me|give\s+me|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|exact|original|hidden|secret|initial)\s+){0,2}(?:system\s+(?:prompt|message|instructions)|initial\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions)|instructions\s+(?:above|you\s+were\s+given))|repeat\s+(?:the\s+)?(?:words|text|everything)\s+above|everything\s+above\s+this\s+line)\b/i,
  },
  {
    name: 'role_delimiter',
    weight: 0.4,
    // Spaces and tabs only after `^`: `\s*` there would rescan every run of blank lines from each line start.
    pattern: /<\|(?:im_start|im_end|system|endoftext)\|>|\[\/?INST\]|<<\/?SYS>>|^[ \t]*#{2,}[ \t]*(?:system|instruction)s?[ \t]*:|^[ \t]*system[ \t]*:/im,
  },
  {
    name: 'encoding_request',
    weight: 0.25,
    pattern:
      /\b(?:decode|decrypt|deobfuscate|translate)\s+(?:this|the\s+following|it)\b[^.\n]{0,40}\b(?:base64|rot13|hex|binary|morse|cipher)\b|\b(?:base64|rot13)\s*(?:encoded|decode)\b/i,
  },
  {
    name: 'encoded_blob',
    weight: 0.2,
    // A long run of base64 with padding or mixed case and digits: where instructions get smuggled.
    pattern: /(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]{0,200}\d)(?=[A-Za-z0-9+/]{0,200}[a-z])(?=[A-Za-z0-9+/]{0,200}[A-Z])[A-Za-z0-9+/]{48,}={0,2}/,
  },
  {
    name: 'invisible_characters',
    weight: 0.3,
    // Zero-width characters and Unicode tag characters, which hide text from people but not from models.
    pattern: /[\u200B-\u200D\u2060\u2062-\u2064\uFEFF]|\uDB40[\uDC00-\uDC7F]/,
  },
];

export const promptInjection = defineCheck({
  id: 'default.promptInjection',
  aliases: ['default.detectPromptInjection'],
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['threshold'],
  parse: (params) => ({ threshold: optionalNumber(params, 'threshold', 0.5, { min: 0, max: 1 }) }),
  run({ threshold }, input) {
    const text = scannedText(input.text);
    const found: string[] = [];
    let clean = 1;
    for (const { name, weight, pattern } of signals) {
      if (!pattern.test(text)) continue;
      found.push(name);
      clean *= 1 - weight;
    }
    const score = Math.round((1 - clean) * 1000) / 1000;
    const verdict = score < threshold;
    return {
      verdict,
      data: {
        score,
        threshold,
        signals: found,
        explanation:
          found.length === 0
            ? 'No known injection phrasing found.'
            : `Score ${score} from ${found.join(', ')}${verdict ? `, below the threshold ${threshold}` : `, at or above the threshold ${threshold}`}.`,
      },
    };
  },
});
