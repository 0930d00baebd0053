ACCELERATE_LOG_LEVEL=info \
    accelerate launch --config_file recipes/accelerate_configs/zero3.yaml \
    src/open_r1/grpo.py --config trl_openr1_config_demo.yaml \
    --vllm_mode colocate
