# test_qemu_kvm.sh -- integration-qemu with QEMU on KVM instead of TCG (see
# test_qemu.sh): the stub against QEMU's devices where the vCPU really runs.
LKVM_QEMU_ACCEL=kvm exec bash "$(dirname "$0")/test_qemu.sh" "$@"
