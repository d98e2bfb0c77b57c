"""Serves a text-to-image diffusers pipeline to mediagen's command engine.

mediagen starts this script (the `commands` section of its config file) and keeps it running, so
the pipeline is loaded once and stays on the GPU between jobs. It speaks the command engine's
JSON-lines protocol (docs/engines.md, "Command engine"): one `job` line on stdin per job, answered
on stdout with `progress` lines (one per denoising step), then `done` with the PNGs it saved into
the job's `output_dir`, or `error`. A `cancel` line interrupts the denoising loop.

Settings come from the environment (the `env` of the command's config):
  MODEL_PATH  the weights: a diffusers folder (with model_index.json) or one .safetensors file
              (SDXL). Required; nothing is downloaded.
  DEVICE      cuda, cuda:1, mps or cpu; default: a CUDA GPU if there is one (with several, the
              process's MEDIAGEN_PROCESS_INDEX picks one, so `processes` spreads over them),
              else mps, else cpu.
  DTYPE       float16 or float32; default float16 on CUDA, float32 elsewhere.
  VARIANT     a weights variant of the folder, such as fp16; default none.

Request fields read from `input`: prompt, negative_prompt, width, height, steps, guidance_scale,
seed, num_images.
"""
import json
import os
import queue
import secrets
import sys
import threading
import traceback

import torch
from diffusers import AutoPipelineForText2Image, StableDiffusionXLPipeline

out_lock = threading.Lock()
jobs = queue.Queue()
cancelled = set()


def send(**msg):
    with out_lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def read_stdin():
    """Jobs go to the queue; a cancel is seen at once, while a job runs."""
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "cancel":
            cancelled.add(msg.get("job_id"))
        elif msg.get("type") == "job":
            jobs.put(msg)
    jobs.put(None)  # stdin closed: mediagen is stopping us


def load_pipeline():
    path = os.environ.get("MODEL_PATH")
    if not path:
        sys.exit("MODEL_PATH is not set: give the weights' folder or .safetensors file in the command's env")
    if os.environ.get("DEVICE"):
        device = os.environ["DEVICE"]
    elif torch.cuda.is_available():
        device = f"cuda:{int(os.environ.get('MEDIAGEN_PROCESS_INDEX', '0')) % torch.cuda.device_count()}"
    elif torch.backends.mps.is_available():
        device = "mps"
    else:
        device = "cpu"
    dtype = getattr(torch, os.environ.get("DTYPE", "float16" if device.startswith("cuda") else "float32"))
    if os.path.isfile(path):
        pipe = StableDiffusionXLPipeline.from_single_file(path, torch_dtype=dtype)
    else:
        extra = {"variant": os.environ["VARIANT"]} if os.environ.get("VARIANT") else {}
        pipe = AutoPipelineForText2Image.from_pretrained(path, torch_dtype=dtype, use_safetensors=True, local_files_only=True, **extra)
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    return pipe, device


def generate(pipe, device, job):
    job_id, inp = job["job_id"], job["input"]
    steps = int(inp.get("steps", 30))
    seed = int(inp["seed"]) if inp.get("seed") is not None else secrets.randbelow(2**32)

    def on_step_end(pipeline, step_index, timestep, callback_kwargs):
        send(type="progress", job_id=job_id, fraction=(step_index + 1) / steps, status="sampling")
        if job_id in cancelled:
            pipeline._interrupt = True  # diffusers' way to stop the denoising loop early
        return callback_kwargs

    result = pipe(
        prompt=inp["prompt"],
        negative_prompt=inp.get("negative_prompt") or None,
        width=int(inp.get("width", 1024)) // 8 * 8,
        height=int(inp.get("height", 1024)) // 8 * 8,
        num_inference_steps=steps,
        guidance_scale=float(inp.get("guidance_scale", 5.0)),
        num_images_per_prompt=int(inp.get("num_images", 1)),
        generator=torch.Generator(device="cpu" if device == "mps" else device).manual_seed(seed),
        callback_on_step_end=on_step_end,
    )
    if job_id in cancelled:
        send(type="error", job_id=job_id, code="cancelled", message="cancelled")
        return
    outputs = []
    for i, image in enumerate(result.images):
        path = os.path.join(job["output_dir"], f"image-{i + 1}.png")
        image.save(path)
        outputs.append({"path": path, "role": "output"})
    send(type="done", job_id=job_id, outputs=outputs)


def main():
    pipe, device = load_pipeline()
    threading.Thread(target=read_stdin, daemon=True).start()
    send(type="ready")
    out_of_memory = getattr(torch.cuda, "OutOfMemoryError", MemoryError)
    while True:
        job = jobs.get()
        if job is None:
            return
        try:
            generate(pipe, device, job)
        except out_of_memory:
            torch.cuda.empty_cache()
            send(type="error", job_id=job["job_id"], code="engine_failed", message="out of GPU memory", retryable=True)
        except (ValueError, TypeError, KeyError) as err:
            # The pipeline's own checks (sizes, prompt): the request's fault. No traceback to the client.
            send(type="error", job_id=job["job_id"], code="input_invalid", message=str(err).splitlines()[0][:500] if str(err) else type(err).__name__)
        except Exception as err:  # noqa: BLE001 - any other failure ends the job, not the server
            traceback.print_exc()  # to stderr: mediagen logs it with the job id
            send(type="error", job_id=job["job_id"], code="engine_failed", message=type(err).__name__)
        finally:
            cancelled.discard(job["job_id"])


if __name__ == "__main__":
    main()
