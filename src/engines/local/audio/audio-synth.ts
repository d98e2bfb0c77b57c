import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { AudioPlan } from './audio-plan.js';
import type { Prng } from '../seed.js';

/**
 * Additive synthesis of an AudioPlan: a pad holding each bar's chord, a plucked bass on the
 * chord's root, a lead playing the prompt's melody, kick, snare and hi-hat, over a filtered-noise
 * bed that swells like surf. Plain arithmetic on Float32Arrays, one bar at a time, yielding to the
 * event loop between bars so a cancel arrives and is honoured within a bar's work.
 */

export const AUDIO_SAMPLE_RATE = 44_100;

export interface Stereo {
  readonly left: Float32Array;
  readonly right: Float32Array;
}

/** Wavetables: one period each, so a voice costs a lookup a sample rather than a sin per harmonic. */
const TABLE_SIZE = 4096;
function table(harmonics: readonly number[]): Float32Array {
  const t = new Float32Array(TABLE_SIZE + 1);
  const norm = harmonics.reduce((a, b) => a + Math.abs(b), 0);
  for (let i = 0; i <= TABLE_SIZE; i++) {
    let s = 0;
    harmonics.forEach((amp, h) => (s += amp * Math.sin((2 * Math.PI * (h + 1) * i) / TABLE_SIZE)));
    t[i] = s / norm;
  }
  return t;
}
const PAD = table([1, 0.35, 0.12]);
const BASS = table([1, 0.45, 0.15]);
/** Odd harmonics falling as 1/n²: a soft, triangle-like lead. */
const LEAD = table([1, 0, 1 / 9, 0, 1 / 25, 0, 1 / 49]);

type Envelope = (i: number, length: number) => number;

/** Rises over `attack` frames, holds, falls over `release` frames: the pad's swell. */
const swell = (attack: number, release: number): Envelope => (i, n) => Math.min(1, i / attack, (n - i) / release);
/** A 5 ms rise and an exponential fall with time constant `tau` frames: a plucked string. */
const pluck = (tau: number): Envelope => (i) => Math.min(1, i / (0.005 * AUDIO_SAMPLE_RATE)) * Math.exp(-i / tau);

interface Voice {
  readonly wave: Float32Array;
  readonly hz: number;
  readonly amp: number;
  /** -1 (left) to 1 (right). */
  readonly pan: number;
  /** A right channel this many cents sharp: the two channels beat slowly, which sounds wide. */
  readonly detuneCents: number;
  readonly env: Envelope;
}

export class Synth {
  readonly out: Stereo;
  readonly frames: number;
  readonly #plan: AudioPlan;
  readonly #stepFrames: number;
  readonly #drums: Prng;
  readonly #pan: Prng;

  constructor(plan: AudioPlan, frames: number, arrangement: Prng) {
    this.#plan = plan;
    this.frames = frames;
    this.out = { left: new Float32Array(frames), right: new Float32Array(frames) };
    // Whole frames a sixteenth note, so every bar starts on the same grid whatever the tempo.
    this.#stepFrames = Math.round((AUDIO_SAMPLE_RATE * 60) / plan.bpm / 4);
    this.#drums = arrangement.fork('drum-noise');
    this.#pan = arrangement.fork('pan');
  }

  get barFrames(): number {
    return 16 * this.#stepFrames;
  }

  /** Renders every bar, then the noise bed and the master stage, checking `signal` as it goes. */
  async render(signal: AbortSignal): Promise<Stereo> {
    const bars = Math.ceil(this.frames / this.barFrames);
    for (let bar = 0; bar < bars; bar++) {
      this.#bar(bar);
      await yieldToLoop();
      signal.throwIfAborted();
    }
    await this.#finish(signal);
    return this.out;
  }

  #freq(degree: number, octaveOfRoot: number): number {
    const { scale, rootHz } = this.#plan;
    const octave = Math.floor(degree / scale.length);
    const semis = scale[((degree % scale.length) + scale.length) % scale.length]! + 12 * octave;
    return rootHz * 2 ** octaveOfRoot * 2 ** (semis / 12);
  }

  #bar(bar: number): void {
    const p = this.#plan;
    const step = this.#stepFrames;
    const start = bar * this.barFrames;
    const chord = p.progression[bar % p.progression.length]!;
    const sr = AUDIO_SAMPLE_RATE;
    // The pad overlaps the next bar by a little, so chords change without a gap.
    const padLength = this.barFrames + Math.round(0.25 * sr);
    for (const [i, d] of [chord, chord + 2, chord + 4].entries()) {
      const env = swell(Math.round(0.3 * sr), Math.round(0.35 * sr));
      this.#voice(start, padLength, { wave: PAD, hz: this.#freq(d, 1), amp: 0.07, pan: (i - 1) * 0.5, detuneCents: 6, env });
    }
    for (let s = 0; s < 16; s += 4) {
      const env = pluck(0.25 * sr);
      this.#voice(start + s * step, 4 * step, { wave: BASS, hz: this.#freq(chord, 0), amp: 0.22, pan: 0, detuneCents: 0, env });
    }
    for (let s = 0; s < 16; s += 2) {
      const slot = (bar % 2) * 8 + s / 2;
      if (!p.melodySteps[slot]) continue;
      const note = p.melody[(bar * 8 + s / 2) % p.melody.length]!;
      const env = pluck(0.18 * sr);
      const pan = this.#pan.range(-0.6, 0.6);
      this.#voice(start + s * step, 3 * step, { wave: LEAD, hz: this.#freq(note, 2), amp: 0.2, pan, detuneCents: 3, env });
    }
    if (p.percussion === 0) return;
    for (let s = 0; s < 16; s++) {
      const at = start + s * step;
      if (p.kick[s]) this.#kick(at, 0.55 * p.percussion);
      if (p.snare[s]) this.#snare(at, 0.3 * p.percussion);
      // Off-beat hats a little louder, the way a drummer accents them.
      if (p.hat[s]) this.#hat(at, (s % 4 === 2 ? 0.12 : 0.07) * p.percussion);
    }
  }

  #voice(at: number, length: number, v: Voice): void {
    const n = Math.min(length, this.frames - at);
    if (n <= 0) return;
    const { left, right } = this.out;
    const gl = Math.cos(((v.pan + 1) * Math.PI) / 4) * v.amp;
    const gr = Math.sin(((v.pan + 1) * Math.PI) / 4) * v.amp;
    const incL = (v.hz / AUDIO_SAMPLE_RATE) * TABLE_SIZE;
    const incR = incL * 2 ** (v.detuneCents / 1200);
    let pl = 0;
    let pr = 0;
    for (let i = 0; i < n; i++) {
      const e = v.env(i, length);
      left[at + i]! += gl * e * lookup(v.wave, pl);
      right[at + i]! += gr * e * lookup(v.wave, pr);
      pl = (pl + incL) % TABLE_SIZE;
      pr = (pr + incR) % TABLE_SIZE;
    }
  }

  /** A sine falling from 150 Hz to 45 Hz in a few tens of milliseconds, dying away. */
  #kick(at: number, amp: number): void {
    const sr = AUDIO_SAMPLE_RATE;
    const n = Math.min(Math.round(0.35 * sr), this.frames - at);
    let phase = 0;
    for (let i = 0; i < n; i++) {
      const t = i / sr;
      phase += (2 * Math.PI * (45 + 105 * Math.exp(-t / 0.03))) / sr;
      const s = amp * Math.exp(-t / 0.18) * Math.min(1, i / 32) * Math.sin(phase);
      this.out.left[at + i]! += s;
      this.out.right[at + i]! += s;
    }
  }

  /** Noise and a 180 Hz body, both short. */
  #snare(at: number, amp: number): void {
    const sr = AUDIO_SAMPLE_RATE;
    const n = Math.min(Math.round(0.2 * sr), this.frames - at);
    for (let i = 0; i < n; i++) {
      const t = i / sr;
      const noise = this.#drums.next() * 2 - 1;
      const s = amp * (0.6 * noise * Math.exp(-t / 0.06) + 0.5 * Math.sin(2 * Math.PI * 180 * t) * Math.exp(-t / 0.04));
      this.out.left[at + i]! += s;
      this.out.right[at + i]! += s * 0.9;
    }
  }

  /** High-passed noise (the difference of successive samples), a few milliseconds long. */
  #hat(at: number, amp: number): void {
    const sr = AUDIO_SAMPLE_RATE;
    const n = Math.min(Math.round(0.06 * sr), this.frames - at);
    let previous = 0;
    for (let i = 0; i < n; i++) {
      const noise = this.#drums.next() * 2 - 1;
      const s = amp * (noise - previous) * Math.exp(-i / sr / 0.015);
      previous = noise;
      this.out.left[at + i]! += s * 0.8;
      this.out.right[at + i]! += s;
    }
  }

  /**
   * A second at a time: the noise bed (white noise through a one-pole low-pass, swelling slowly),
   * then a gentle limiter (tanh) and short fades at both ends, so the ends do not click.
   */
  async #finish(signal: AbortSignal): Promise<void> {
    const p = this.#plan;
    const sr = AUDIO_SAMPLE_RATE;
    const alpha = 1 - Math.exp((-2 * Math.PI * p.noiseCutoffHz) / sr);
    const noise = this.#drums.fork('bed');
    const fadeIn = Math.round(0.01 * sr);
    const fadeOut = Math.min(Math.round(0.2 * sr), Math.floor(this.frames / 4));
    const { left, right } = this.out;
    let yl = 0;
    let yr = 0;
    for (let from = 0; from < this.frames; from += sr) {
      const to = Math.min(this.frames, from + sr);
      for (let i = from; i < to; i++) {
        const level = 2 * p.noiseLevel * (0.55 + 0.45 * Math.sin((2 * Math.PI * p.swellHz * i) / sr));
        yl += alpha * (noise.next() * 2 - 1 - yl);
        yr += alpha * (noise.next() * 2 - 1 - yr);
        const edge = Math.min(1, i / fadeIn, (this.frames - 1 - i) / fadeOut);
        left[i] = Math.tanh((left[i]! + level * yl) * 1.1) * 0.95 * edge;
        right[i] = Math.tanh((right[i]! + level * yr) * 1.1) * 0.95 * edge;
      }
      await yieldToLoop();
      signal.throwIfAborted();
    }
  }
}

function lookup(wave: Float32Array, phase: number): number {
  const i = Math.floor(phase);
  const f = phase - i;
  return wave[i]! + (wave[i + 1]! - wave[i]!) * f;
}
