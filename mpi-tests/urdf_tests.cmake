# URDF input (issue 11.4): the same URDF in mbspar and in MuJoCo gives the same q̈ (random trees
# with every supported joint type, and Debian dart-doc's robots when installed). MuJoCo is
# optional (Debian libmujoco-dev: scripts/setup.sh --with-urdf, which scripts/test.sh uses);
# without it the test is registered as skipped and says why.
if(MBS_ENABLE_URDF)
  # joint forces of URDF robots: model.urdf.joints and the torque table (docs/urdf.md)
  mbs_add_test(test_urdf_forces SOURCES test_urdf_forces.c LIBS mbs_core LABELS unit)
  if(TARGET mbspar) # a driven robot through `run` (inverse's torques fed back)
    set(MBS_DRIVE sh ${CMAKE_CURRENT_SOURCE_DIR}/urdf_drive.sh $<TARGET_FILE:mbspar>
        ${CMAKE_CURRENT_SOURCE_DIR}/urdf_drive)
    add_test(NAME urdf_drive COMMAND ${MBS_DRIVE})
    set_tests_properties(urdf_drive PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 120
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
    add_test(NAME urdf_drive.np2 COMMAND ${MBS_DRIVE} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
                                         2 ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(urdf_drive.np2 PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
    # URDF robots as distributed-memory models (issue 35 item 4, docs/urdf.md "Memory")
    add_test(NAME urdf_local.np3
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/urdf_local.sh $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3
                     ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(urdf_local.np3 PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endif()
  find_library(MBS_MUJOCO_LIBRARY mujoco)
  find_path(MBS_MUJOCO_INCLUDE mujoco/mujoco.h)
  if(MBS_MUJOCO_LIBRARY AND MBS_MUJOCO_INCLUDE)
    mbs_add_test(test_urdf_mujoco SOURCES test_urdf_mujoco.c LIBS mbs_core ${MBS_MUJOCO_LIBRARY}
                 LABELS unit ARGS /usr/share/doc/dart/data)
    target_include_directories(test_urdf_mujoco PRIVATE ${MBS_MUJOCO_INCLUDE})
    # the real-robot corpus (robots/README.md): q0 in the file order of the joints, mbspar at 1,
    # 2 and 4 ranks (schur, the distributed engine) against MuJoCo to 1e-10 in q̈
    add_executable(test_robots_mujoco test_robots_mujoco.c)
    target_link_libraries(test_robots_mujoco PRIVATE mbs_core ${MBS_MUJOCO_LIBRARY})
    target_include_directories(test_robots_mujoco PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                               ${CMAKE_SOURCE_DIR}/src ${MBS_MUJOCO_INCLUDE})
    if(TARGET mbspar)
      # every robot of the corpus; talos_reduced (a zero-inertia sensor frame) and go1 (a
      # semidefinite dummy root) load since fixed-joint links are merged (issue 30)
      foreach(robot ur5 panda a1 solo12 simple_humanoid talos_reduced go1)
        set(rcfg ${CMAKE_CURRENT_SOURCE_DIR}/robots/${robot}.cfg)
        set(rcmd sh ${CMAKE_CURRENT_SOURCE_DIR}/robots_mujoco.sh $<TARGET_FILE:mbspar>
                 $<TARGET_FILE:test_robots_mujoco> ${rcfg} schur)
        add_test(NAME urdf_robot.${robot} COMMAND ${rcmd})
        set_tests_properties(urdf_robot.${robot} PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 120
                             ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
        foreach(np 2 4)
          add_test(NAME urdf_robot.${robot}.np${np}
                   COMMAND ${rcmd} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                           ${MPIEXEC_PREFLAGS} --oversubscribe)
          set_tests_properties(urdf_robot.${robot}.np${np} PROPERTIES LABELS mpi PROCESSORS ${np}
                               TIMEOUT 120
                               ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
        endforeach()
      endforeach()
    endif()
  else()
    message(STATUS "MuJoCo not found (Debian libmujoco-dev): test_urdf_mujoco registered as skipped")
    add_test(NAME test_urdf_mujoco
             COMMAND sh -c "echo 'MuJoCo not found at configure time (Debian libmujoco-dev; scripts/setup.sh --with-urdf): skipped'; exit 77")
    set_tests_properties(test_urdf_mujoco PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
    add_test(NAME urdf_robot
             COMMAND sh -c "echo 'MuJoCo not found at configure time (Debian libmujoco-dev): the real-robot corpus (robots/) is skipped'; exit 77")
    set_tests_properties(urdf_robot PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  endif()
endif()
# URDF reader without MuJoCo (issue 30): q0 / qd0 in the file's joint order, names, libxml2
# hardening, a linear build
if(MBS_ENABLE_URDF)
  mbs_add_test(test_urdf SOURCES test_urdf.c LIBS mbs_core LABELS unit TIMEOUT 120)
  # fixed-joint links merged into their parent's body: one closed-form pendulum per class
  mbs_add_test(test_urdf_merge SOURCES test_urdf_merge.c LIBS mbs_core LABELS unit)
  # semidefinite body inertias (a thin rod) on moving joints: aba, crba; the others refuse
  mbs_add_test(test_semidef SOURCES test_semidef.c LIBS mbs_core LABELS unit)
  if(TARGET mbspar) # the rod that was in the bad-input corpus: valid, q̈ = 0.2 m g / 0.016
    add_test(NAME semidef_rod_urdf
             COMMAND $<TARGET_FILE:mbspar> accel ${CMAKE_CURRENT_SOURCE_DIR}/semidef/rod_moving.urdf
                     --set solver.method=crba --json -)
    set_tests_properties(semidef_rod_urdf PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 60
                         PASS_REGULAR_EXPRESSION "\"qdd\": \\[36\\.78750000000000"
                         ENVIRONMENT "${MBS_MPI_ENV}")
  endif()
endif()
