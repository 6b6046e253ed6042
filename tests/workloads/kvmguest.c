// SPDX-License-Identifier: MIT
/*
 * Workload: a VMM with a tiny real-mode guest, for `pmon trace -e kvm` on a
 * host. The guest writes N bytes to port 0x3f8 and halts:
 *
 *	mov dx, 0x3f8
 *	mov cx, N
 *   1:	out dx, al	; a KVM_EXIT_IO to this VMM, each
 *	loop 1b
 *	hlt		; KVM_EXIT_HLT: the end
 *
 * so KVM_RUN returns to user space N times with KVM_EXIT_IO and once with
 * KVM_EXIT_HLT (Documentation/virt/kvm/api.rst). It prints what it saw.
 * usage: kvmguest N (1..65535); exit 77 where no VM can be made here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_BASE 0x1000

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (n < 1 || n > 65535) {
		fprintf(stderr, "usage: kvmguest N (1..65535)\n");
		return 2;
	}
	const uint8_t code[] = { 0xba, 0xf8,	   0x03, /* mov dx, 0x3f8 */
				 0xb9, (uint8_t)n, (uint8_t)(n >> 8), /* mov cx, N */
				 0xee, /* out dx, al */
				 0xe2, 0xfd, /* loop -3 */
				 0xf4 /* hlt */ };
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		fprintf(stderr, "kvmguest: /dev/kvm: %s\n", strerror(errno));
		return 77;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "kvmguest: KVM_CREATE_VM: %s\n", strerror(errno));
		return 77;
	}
	uint8_t *mem =
		mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	struct kvm_userspace_memory_region region = { .slot = 0,
						      .guest_phys_addr = GUEST_BASE,
						      .memory_size = 0x1000,
						      .userspace_addr = (uintptr_t)mem };
	int vcpu = -1, sz = -1;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) ||
	    (vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0 ||
	    (sz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0) {
		fprintf(stderr, "kvmguest: cannot set the guest up: %s\n", strerror(errno));
		return 77;
	}
	struct kvm_run *run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = GUEST_BASE, .rflags = 2 };
	if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs))
		return 1;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) || ioctl(vcpu, KVM_SET_REGS, &regs))
		return 1;
	long io = 0;
	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "kvmguest: KVM_RUN: %s\n", strerror(errno));
			return 1;
		}
		if (run->exit_reason == KVM_EXIT_IO && run->io.port == 0x3f8)
			io++;
		else if (run->exit_reason == KVM_EXIT_HLT)
			break;
		else {
			fprintf(stderr, "kvmguest: unexpected exit %u\n", run->exit_reason);
			return 1;
		}
	}
	printf("kvmguest: %ld port writes, then hlt\n", io);
	return io == n ? 0 : 1;
}
