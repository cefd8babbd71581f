/**
 * Hashtags (spec Feed rule 1, decisions.md, docs/feed.md): the text is NFC-normalised, then a tag
 * is `#` followed by a run of Unicode letters, marks, decimal digits or `_`, folded by `foldTag`;
 * a tag longer than 40 code points (after folding) is not a tag; duplicates removed, the first 8
 * in order of appearance. Marks belong in the run: without them `नमस्ते` is cut at its first
 * vowel sign and a decomposed `café` (e + U+0301) loses its accent.
 */
export const MAX_HASHTAG_CHARS = 40
export const MAX_HASHTAGS = 8
/**
 * The version of the rule above. Bodies stored before it carry older tags (or none), and are
 * re-extracted from their text when the feed opens (FeedService.open).
 */
export const HASHTAG_RULE = 2

const TAG_RUN = /#([\p{L}\p{M}\p{Nd}_]+)/gu
const TAG = /^[\p{L}\p{M}\p{Nd}_]{1,40}$/u

/**
 * Locale-independent lowercase, then NFC again (lowercasing can decompose: `İ` becomes `i` +
 * U+0307), so a tag typed composed or decomposed, in any case, folds to one string.
 */
function foldTag (run: string): string {
  return run.normalize('NFC').toLowerCase().normalize('NFC')
}

export function extractHashtags (text: string): string[] {
  const tags: string[] = []
  for (const match of text.normalize('NFC').matchAll(TAG_RUN)) {
    const tag = foldTag(match[1])
    if ([...tag].length > MAX_HASHTAG_CHARS) continue
    if (!tags.includes(tag)) tags.push(tag)
    if (tags.length === MAX_HASHTAGS) break
  }
  return tags
}

/**
 * A tag as a listing route receives it: an optional leading `#`, any case, any normal form;
 * folded by the rule publish uses. Undefined when it is not a tag.
 */
export function normalizeTag (raw: string): string | undefined {
  const tag = foldTag(raw.startsWith('#') ? raw.slice(1) : raw)
  return TAG.test(tag) ? tag : undefined
}
