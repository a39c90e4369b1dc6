# URDF input (issue 11.4): the same URDF in mbspar and in MuJoCo gives the same q̈ (random trees
# with every supported joint type, and Debian dart-doc's robots when installed). MuJoCo is
# optional (Debian libmujoco-dev: scripts/setup.sh --with-urdf, which scripts/test.sh uses);
# without it the test is registered as skipped and says why.
if(MBS_ENABLE_URDF)
  find_library(MBS_MUJOCO_LIBRARY mujoco)
  find_path(MBS_MUJOCO_INCLUDE mujoco/mujoco.h)
  if(MBS_MUJOCO_LIBRARY AND MBS_MUJOCO_INCLUDE)
    mbs_add_test(test_urdf_mujoco SOURCES test_urdf_mujoco.c LIBS mbs_core ${MBS_MUJOCO_LIBRARY}
                 LABELS unit ARGS /usr/share/doc/dart/data)
    target_include_directories(test_urdf_mujoco PRIVATE ${MBS_MUJOCO_INCLUDE})
  else()
    message(STATUS "MuJoCo not found (Debian libmujoco-dev): test_urdf_mujoco registered as skipped")
    add_test(NAME test_urdf_mujoco
             COMMAND sh -c "echo 'MuJoCo not found at configure time (Debian libmujoco-dev; scripts/setup.sh --with-urdf): skipped'; exit 77")
    set_tests_properties(test_urdf_mujoco PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  endif()
endif()
# URDF reader without MuJoCo (issue 30): q0 / qd0 in the file's joint order, names, libxml2
# hardening, a linear build
if(MBS_ENABLE_URDF)
  mbs_add_test(test_urdf SOURCES test_urdf.c LIBS mbs_core LABELS unit TIMEOUT 120)
endif()
