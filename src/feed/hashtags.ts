/**
 * Hashtags (spec Feed rule 1, decisions.md): `#` followed by a run of Unicode letters, decimal
 * digits or `_`; a run longer than 40 code points is not a tag; lowercase, duplicates removed,
 * the first 8 in order of appearance.
 */
export const MAX_HASHTAG_CHARS = 40
export const MAX_HASHTAGS = 8

const TAG_RUN = /#([\p{L}\p{Nd}_]+)/gu
const TAG = /^[\p{L}\p{Nd}_]{1,40}$/u

export function extractHashtags (text: string): string[] {
  const tags: string[] = []
  for (const match of text.matchAll(TAG_RUN)) {
    const run = match[1]
    if ([...run].length > MAX_HASHTAG_CHARS) continue
    const tag = run.toLowerCase()
    if (!tags.includes(tag)) tags.push(tag)
    if (tags.length === MAX_HASHTAGS) break
  }
  return tags
}

/** A tag as a listing route receives it: an optional leading `#`, any case. Undefined when it is not a tag (`u`: 40 code points). */
export function normalizeTag (raw: string): string | undefined {
  const tag = (raw.startsWith('#') ? raw.slice(1) : raw).toLowerCase()
  return TAG.test(tag) ? tag : undefined
}
