import { Prng, sha256 } from '../seed.js';

/**
 * What a piece of model-l-1 audio is, before any sample exists: its key, scale, tempo, chords,
 * melody, drum patterns and noise bed. The words of the prompt pick the key, scale, tempo and
 * melody (so a prompt sounds like itself whatever the seed); the seed picks the arrangement
 * (progression, rhythms, panning), so two seeds are two takes of one tune.
 */

export interface AudioPlan {
  readonly bpm: number;
  /** The bass root, 55 to 104 Hz (A1 to G#2); pad and melody sit one and two octaves above. */
  readonly rootHz: number;
  readonly scaleName: string;
  /** Semitones above the root. */
  readonly scale: readonly number[];
  /** Scale degrees, one chord a bar, looped. */
  readonly progression: readonly number[];
  /** Scale degrees (past the scale's length is the next octave), one a word of the prompt. */
  readonly melody: readonly number[];
  /** Which of the 16 eighth notes of a two-bar phrase play the next melody note. */
  readonly melodySteps: readonly boolean[];
  /** Which of the 16 sixteenth notes of a bar each drum plays on. */
  readonly kick: readonly boolean[];
  readonly snare: readonly boolean[];
  readonly hat: readonly boolean[];
  /** 0 (none) to 1: the drums' level. */
  readonly percussion: number;
  /** Level of the filtered-noise bed (rain, wind, surf), and its low-pass cutoff and swell rate. */
  readonly noiseLevel: number;
  readonly noiseCutoffHz: number;
  readonly swellHz: number;
  /** Hue of the waveform preview, 0 to 360, from the key. */
  readonly hue: number;
}

const SCALES: Readonly<Record<string, readonly number[]>> = {
  major: [0, 2, 4, 5, 7, 9, 11],
  mixolydian: [0, 2, 4, 5, 7, 9, 10],
  'major pentatonic': [0, 2, 4, 7, 9],
  minor: [0, 2, 3, 5, 7, 8, 10],
  dorian: [0, 2, 3, 5, 7, 9, 10],
  'minor pentatonic': [0, 3, 5, 7, 10],
};
const BRIGHT_SCALES = ['major', 'mixolydian', 'major pentatonic'];
const DARK_SCALES = ['minor', 'dorian', 'minor pentatonic'];

/** Word families that steer the music the way a listener would expect from the prompt. */
const CALM = words('calm ambient slow soft gentle sleep sleepy relax relaxing peaceful quiet meditation dreamy lofi chill lullaby');
const ENERGY = words('fast energetic dance upbeat drum drums beat beats techno rock party edm house running action intense');
const NOISY = words('rain rainy wind windy ocean sea surf waves wave storm noise static fire forest river water thunder crowd city traffic vinyl crackle hiss');
const DARK = words('sad dark night minor melancholy melancholic gloomy mysterious horror eerie cold lonely');
const BRIGHT = words('happy bright sunny joyful cheerful major summer warm uplifting playful');

const PROGRESSIONS: readonly (readonly number[])[] = [
  [0, 5, 3, 4],
  [0, 3, 4, 0],
  [0, 4, 5, 3],
  [5, 3, 0, 4],
  [0, 2, 3, 4],
  [0, 3, 0, 4],
];
const KICKS: readonly (readonly number[])[] = [[0, 8], [0, 6, 8], [0, 4, 8, 12], [0, 7, 10], [0, 3, 8, 11]];
const SNARES: readonly (readonly number[])[] = [[4, 12], [12], [4, 12, 15]];

function words(list: string): ReadonlySet<string> {
  return new Set(list.split(' '));
}

/** The prompt's words, lower-cased, letters and digits of any script. */
export function promptWords(prompt: string): string[] {
  return prompt.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function steps(count: number, on: readonly number[]): boolean[] {
  return Array.from({ length: count }, (_, i) => on.includes(i));
}

const countIn = (ws: readonly string[], family: ReadonlySet<string>) => ws.filter((w) => family.has(w)).length;

/** `key` seeds the arrangement (sceneKey: model, prompt and seed); the prompt alone sets the rest. */
export function planAudio(prompt: string, key: Buffer): AudioPlan {
  const ws = promptWords(prompt);
  const text = sha256('audio-words', ws.length > 0 ? ws.join(' ') : prompt);
  const arrangement = new Prng(key);

  const calm = countIn(ws, CALM) > 0;
  const energetic = countIn(ws, ENERGY) > 0;
  const dark = countIn(ws, DARK) - countIn(ws, BRIGHT);
  const pool = dark > 0 ? DARK_SCALES : dark < 0 ? BRIGHT_SCALES : Object.keys(SCALES);
  const scaleName = pool[text.readUInt8(0) % pool.length]!;
  const scale = SCALES[scaleName]!;
  const pitchClass = text.readUInt8(1) % 12;

  let bpm = 72 + (text.readUInt16BE(2) % 69);
  if (calm && !energetic) bpm = Math.max(56, Math.round(bpm * 0.7));
  if (energetic && !calm) bpm = Math.min(170, Math.round(bpm * 1.25));

  // One degree a word, so the melody spells the prompt; a prompt with no words gets one from its hash.
  const melody = (ws.length > 0 ? ws : [prompt]).slice(0, 64).map((w) => sha256('audio-note', w).readUInt8(0) % (scale.length + 3));

  const rhythm = arrangement.fork('rhythm');
  const density = calm ? 0.35 : energetic ? 0.7 : 0.5;
  const melodySteps = Array.from({ length: 16 }, (_, i) => i === 0 || rhythm.next() < density);
  const percussion = energetic ? 1 : calm ? 0.25 : 0.6;
  const hatEvery = energetic ? 1 : 2;

  const noisy = countIn(ws, NOISY);
  // Log-spaced: a cutoff from a dull rumble to a bright hiss.
  const noiseCutoffHz = Math.round(300 * Math.pow(20, text.readUInt16BE(4) / 65536));
  return {
    bpm,
    rootHz: 55 * Math.pow(2, pitchClass / 12),
    scaleName,
    scale,
    progression: arrangement.fork('progression').pick(PROGRESSIONS),
    melody,
    melodySteps,
    kick: steps(16, rhythm.pick(KICKS)),
    snare: calm ? steps(16, []) : steps(16, rhythm.pick(SNARES)),
    hat: Array.from({ length: 16 }, (_, i) => i % hatEvery === 0),
    percussion,
    noiseLevel: 0.02 + 0.1 * Math.min(1, noisy / 2),
    noiseCutoffHz,
    swellHz: 0.05 + 0.25 * arrangement.fork('swell').next(),
    hue: (pitchClass * 30 + (dark > 0 ? 200 : 20)) % 360,
  };
}
