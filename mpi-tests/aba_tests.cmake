# the optimised ABA (src/aba.c) against the reference kernel
mbs_add_test(test_aba SOURCES test_aba.c LIBS mbs_core LABELS unit)
# the body interface (src/body.h): the table's rows complete, a rigid body's inertia and points
mbs_add_test(test_body SOURCES test_body.c LIBS mbs_core LABELS unit)
# flexible bodies, the modal source (issue 34): the FE beam and Craig-Bampton against closed forms
mbs_add_test(test_flex_beam SOURCES test_flex_beam.c LIBS mbs_core LABELS unit)
# flexible bodies, the config keys (issue 34 part 2a): modal data in the model, strict refusals
mbs_add_test(test_flex_config SOURCES test_flex_config.c LIBS mbs_core LABELS unit)
# flexible bodies, the serial oracle (issue 34 part 2a): rigid limit, cantilever, energy
mbs_add_test(test_flex_oracle SOURCES test_flex_oracle.c LIBS mbs_core LABELS unit)
# flexible bodies in closed loops (docs/flexible.md 15): the oracle's KKT rows against the rigid
# loop baseline (m = 0) and finite differences of the closure through a node
mbs_add_test(test_flex_loops SOURCES test_flex_loops.c LIBS mbs_core LABELS unit)
mbs_add_test(test_flex_aba SOURCES test_flex_aba.c LIBS mbs_core LABELS unit)
# flexible models over the ranks (docs/flexible.md 11): the distributed elimination against the
# dense oracle on random flexible trees and chains, and every 2-4 part split in one process
if(TARGET mbs_parallel)
  mbs_add_test(test_flex_par SOURCES test_flex_par.c LIBS mbs_parallel NPROCS 1 2 3 4 LABELS mpi
               TIMEOUT 120)
  # the constraint-force system with flexible bodies (docs/flexible.md 12): direct, jcg, gs, sor
  # over body ranges against the dense oracle on random flexible trees and chains
  mbs_add_test(test_flex_cfs SOURCES test_flex_cfs.c LIBS mbs_parallel NPROCS 1 2 3 4 LABELS mpi
               TIMEOUT 120)
  # closed loops through flexible bodies in that system (docs/flexible.md 15.2): direct and jcg
  # with the cut joints' rows against the dense oracle's KKT solve on random flexible loop models
  mbs_add_test(test_flex_cfs_loops SOURCES test_flex_cfs_loops.c LIBS mbs_parallel NPROCS 1 2 3 4
               LABELS mpi TIMEOUT 120)
endif()
# the Adams-Bashforth-Moulton PECE core (issue 36) against closed forms
mbs_add_test(test_abm SOURCES test_abm.c LIBS mbs_core LABELS unit)
