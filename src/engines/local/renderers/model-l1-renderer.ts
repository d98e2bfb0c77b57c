import { join } from 'node:path';
import { MODEL_L1_DEFAULT_SECONDS, MODEL_L1_MAX_SECONDS, MODEL_L1_MIN_SECONDS } from '../../../models/audio/model-l-1.js';
import { OUTPUT_MP3, OUTPUT_WAV, encodeMp3, writeWaveformPreview, writeWav } from '../audio/audio-files.js';
import { planAudio } from '../audio/audio-plan.js';
import { AUDIO_SAMPLE_RATE, Synth } from '../audio/audio-synth.js';
import type { ModelRenderer } from '../render-types.js';
import { num, str } from '../request-fields.js';
import { Prng, sceneKey } from '../seed.js';

/**
 * audio/vendor-l/model-l-1: `duration` seconds of 44.1 kHz stereo music synthesised from the
 * prompt and seed (audio-plan.ts, audio-synth.ts), as 16-bit WAV or, by default, MP3; the preview
 * is a picture of the waveform. No inputs to load, so preparing only reads the request.
 */
export const renderModelL1: ModelRenderer = async (model, req, env) => {
  const seconds = Math.min(MODEL_L1_MAX_SECONDS, Math.max(MODEL_L1_MIN_SECONDS, Math.round(num(req, 'duration', MODEL_L1_DEFAULT_SECONDS))));
  const wav = str(req, 'output_format', 'mp3') === 'wav';
  const prompt = str(req, 'prompt', '');
  const { ctx } = env;

  return {
    async render() {
      // With a seed the key is (model, prompt, seed): duration and format change nothing else.
      const key = sceneKey(model, req);
      const plan = planAudio(prompt, key);
      const audio = await new Synth(plan, seconds * AUDIO_SAMPLE_RATE, new Prng(key)).render(ctx.signal);
      const file = wav ? OUTPUT_WAV : OUTPUT_MP3;
      const pcm = wav ? join(ctx.outDir, OUTPUT_WAV.name) : join(env.workDir, 'pcm.wav');
      await writeWav(audio, pcm);
      ctx.signal.throwIfAborted();
      if (!wav) await encodeMp3(pcm, join(ctx.outDir, OUTPUT_MP3.name), env);
      ctx.signal.throwIfAborted();
      return { outputs: [file], preview: await writeWaveformPreview(audio, plan.hue, ctx.outDir) };
    },
  };
};
